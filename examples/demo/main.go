// Command demo shows contextguard keeping an ADK agent inside a small
// context window.
//
// An SRE assistant (an ADK llmagent with kubectl_get_pods, kubectl_describe,
// kubectl_logs and read_file tools) investigates a production incident over
// 15 user turns, with its session in ADK's SQL session service on a SQLite
// file. The guard is given a 16k-token window, so the conversation outgrows
// it within a few turns and is compacted several times. Each model call
// prints a line (the guard's estimate, the tokens sent, the trigger, what the
// guard did, the window's use); a report and a chart of tokens per call
// follow.
//
// Offline by default: a scripted model plays the assistant and reports
// prompt tokens from an o200k count of each request. With GOOGLE_API_KEY set
// a real Gemini model plays it instead.
//
//	cd examples && go run ./demo [-turns 15] [-window 16000] [-out out/tokens.png]
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
)

func main() {
	cfg := config{Log: os.Stderr}
	flag.IntVar(&cfg.Turns, "turns", len(story), fmt.Sprintf("user turns to play (1-%d)", len(story)))
	flag.IntVar(&cfg.Window, "window", 16_000, "context window given to the guard, in tokens (WithMaxTokens)")
	flag.StringVar(&cfg.Out, "out", "out/tokens.png", "chart file (.png or .svg); empty for none")
	flag.StringVar(&cfg.DB, "db", "", "SQLite session file to keep (default: a temporary file, removed at the end)")
	flag.StringVar(&cfg.Model, "model", "gemini-2.5-flash", "Gemini model used when GOOGLE_API_KEY is set")
	offline := flag.Bool("offline", false, "use the scripted model even when GOOGLE_API_KEY is set")
	flag.Parse()
	if !*offline {
		cfg.APIKey = os.Getenv("GOOGLE_API_KEY")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	rep, err := run(ctx, cfg, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
	if rep.OverWindow > 0 {
		fmt.Fprintln(os.Stderr, "demo: some requests exceeded the window")
		os.Exit(1)
	}
}
