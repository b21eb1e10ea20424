// chat streams one Chat Completions request through the recipe: the request body becomes a
// DeepSeek prompt, the engine generates, the parser turns the output into the API's
// server-sent events, printed as they come.
//
//	cd examples/go && go run ./chat MODEL_DIR ["your message"]
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"

	deepinfer "deepinfer.dev/go"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: chat MODEL_DIR [MESSAGE]")
		os.Exit(2)
	}
	model, message := os.Args[1], "Write a haiku about the sea."
	if len(os.Args) > 2 {
		message = os.Args[2]
	}
	if err := run(model, message); err != nil {
		fmt.Fprintln(os.Stderr, "chat:", err)
		os.Exit(1)
	}
}

func run(model, message string) error {
	if err := deepinfer.CheckABI(); err != nil {
		return err
	}
	recipe, err := deepinfer.NewRecipe(model, nil)
	if err != nil {
		return err
	}
	defer recipe.Close()
	engine, err := deepinfer.NewEngine(model, nil)
	if err != nil {
		return err
	}
	defer engine.Close()

	body, _ := json.Marshal(map[string]any{
		"model":      "deepseek-v4",
		"stream":     true,
		"max_tokens": 48,
		"messages":   []map[string]any{{"role": "user", "content": message}},
	})
	prepared, err := recipe.Prepare(deepinfer.ProtocolChatCompletions, body)
	if err != nil {
		return err // a rejected request: err.(*deepinfer.Error).HTTPStatus() and .Body()
	}
	defer prepared.Close()
	parser, err := deepinfer.NewParser(prepared.ParserOptionsJSON())
	if err != nil {
		return err
	}
	defer parser.Close()

	// Ctrl-C cancels the request; the stream then ends with the API's error event.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	req, err := engine.SubmitPrepared(prepared)
	if err != nil {
		return err
	}
	defer req.Close()
	printEvent := func(ev deepinfer.Event) {
		if ev.Name != "" {
			fmt.Printf("event: %s\n", ev.Name)
		}
		fmt.Printf("data: %s\n\n", ev.Data)
	}
	for chunk := range req.Chan(ctx) {
		chunk := chunk
		if err := parser.PushChunk(&chunk, printEvent); err != nil {
			return err
		}
	}
	if err := req.Err(); err != nil {
		return err
	}
	if !parser.Ended() {
		return parser.Finish(printEvent)
	}
	return nil
}
