// Every function libdeepinfer exports is reached by the Go binding: the test binary's imported
// di_ symbols equal abi/exports.txt.
package deepinfer

import (
	"debug/elf"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

func TestBindingImportsEveryExportedFunction(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot, "abi", "exports.txt"))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, l := range strings.Fields(string(b)) {
		want[l] = true
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	f, err := elf.Open(exe)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, s := range syms {
		if strings.HasPrefix(s.Name, "di_") {
			got[s.Name] = true
		}
	}
	var missing, extra []string
	for n := range want {
		if !got[n] {
			missing = append(missing, n)
		}
	}
	for n := range got {
		if !want[n] {
			extra = append(extra, n)
		}
	}
	sort.Strings(missing)
	sort.Strings(extra)
	if len(missing) > 0 {
		t.Errorf("exported but not wrapped by the Go binding: %v", missing)
	}
	if len(extra) > 0 {
		t.Errorf("used by the Go binding but not exported: %v", extra)
	}
}

func TestVersionsAndSchema(t *testing.T) {
	if err := CheckABI(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(VersionString(), "1.") || !strings.Contains(BuildInfo(), "version") {
		t.Errorf("version %q, build info %q", VersionString(), BuildInfo())
	}
	if !strings.Contains(OptionsSchema(), `"temperature"`) {
		t.Error("schema lacks temperature")
	}
	if StatusNotFound.String() != "DI_E_NOT_FOUND" || Status(12345).String() != "DI_UNKNOWN_STATUS" {
		t.Error("status names")
	}
}
