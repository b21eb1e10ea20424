// SetLogHandler: the load phases of NewEngine reach the Go function (the cache line states the
// blocks Info reports), the level filters, a bad level is refused and keeps the handler.
package deepinfer

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

func TestLogHandlerReceivesTheLoadPhases(t *testing.T) {
	var mu sync.Mutex
	var got []string
	levels := map[LogLevel]bool{}
	if err := SetLogHandler(func(l LogLevel, m string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, m)
		levels[l] = true
	}, LogInfo); err != nil {
		t.Fatal(err)
	}
	defer SetLogHandler(nil, LogWarn)
	fx := v4Fixtures(t)[0]
	e, err := NewEngine(fx.Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	info, err := e.Info()
	e.Close()
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		Limits struct {
			NumKvBlocks int64 `json:"num_kv_blocks"`
			BlockSize   int64 `json:"block_size"`
		} `json:"limits"`
	}
	if err := json.Unmarshal([]byte(info), &j); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	all := strings.Join(got, "\n")
	for _, want := range []string{"config: ", "device: cpu", "weights: loaded in ", "engine ready: ",
		fmt.Sprintf("kv cache: %d blocks of %d tokens", j.Limits.NumKvBlocks, j.Limits.BlockSize)} {
		if !strings.Contains(all, want) {
			t.Errorf("no record with %q in:\n%s", want, all)
		}
	}
	if len(levels) != 1 || !levels[LogInfo] {
		t.Errorf("levels %v, want only info", levels)
	}
}

func TestLogLevelFiltersAndBadLevelIsRefused(t *testing.T) {
	var mu sync.Mutex
	n := 0
	if err := SetLogHandler(func(LogLevel, string) { mu.Lock(); n++; mu.Unlock() }, LogWarn); err != nil {
		t.Fatal(err)
	}
	defer SetLogHandler(nil, LogWarn)
	err := SetLogHandler(func(LogLevel, string) {}, LogLevel(9))
	if !errors.Is(err, ErrInvalidArg) {
		t.Fatalf("level 9: %v, want DI_E_INVALID_ARG", err)
	}
	e, err := NewEngine(v4Fixtures(t)[0].Dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.Close()
	mu.Lock()
	defer mu.Unlock()
	if n != 0 {
		t.Errorf("%d records at warn level from a clean load", n)
	}
}
