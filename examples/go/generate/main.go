// generate prints the greedy token ids of a prompt given as ids, then the loaded backends: the
// smallest program over the module deepinfer.dev/go, used by scripts/suites/go_module.sh from a
// module outside this tree.
//
//	cd examples/go && go run ./generate MODEL_DIR MAX_TOKENS ID...
package main

import (
	"context"
	"fmt"
	"os"
	"strconv"

	deepinfer "deepinfer.dev/go"
)

func main() {
	if len(os.Args) < 4 {
		fmt.Fprintln(os.Stderr, "usage: generate MODEL_DIR MAX_TOKENS ID...")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "generate:", err)
		os.Exit(1)
	}
}

func run(model, maxTokens string, args []string) error {
	n, err := strconv.ParseInt(maxTokens, 10, 64)
	if err != nil {
		return err
	}
	ids := make([]int32, len(args))
	for i, a := range args {
		v, err := strconv.ParseInt(a, 10, 32)
		if err != nil {
			return err
		}
		ids[i] = int32(v)
	}
	eng, err := deepinfer.NewEngine(model, nil)
	if err != nil {
		return err
	}
	defer eng.Close()
	opts, err := deepinfer.OptionsFromMap(map[string]any{"temperature": 0.0, "max_tokens": n, "ignore_eos": int64(1)})
	if err != nil {
		return err
	}
	defer opts.Close()
	req, err := eng.Submit(ids, opts)
	if err != nil {
		return err
	}
	defer req.Close()
	var out []int32
	for req.Next(context.Background()) {
		out = append(out, req.Chunk().TokenIDs...)
	}
	if err := req.Err(); err != nil {
		return err
	}
	fmt.Println(out)
	fmt.Println("build:", deepinfer.BuildInfo())
	return nil
}
