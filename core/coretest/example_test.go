package coretest_test

import (
	"context"
	"fmt"

	"github.com/adk-contextguard/contextguard/core/coretest"
	"google.golang.org/genai"
)

// A scripted provider without any ADK: the request of a user turn gets the
// plan's parallel tool calls, and a request above the window is rejected
// with the provider's own overflow error.
func Example() {
	script := coretest.NewScript(coretest.ScriptConfig{
		Window: 60,
		Plan: func(int) coretest.TurnPlan {
			return coretest.TurnPlan{Steps: coretest.Parallel(coretest.Call("grep", 200), coretest.Call("read_file", 300))}
		},
	})
	user := genai.NewContentFromText(coretest.UserMessage(0, coretest.Marker(1), "find the bug"), genai.RoleUser)
	reply, err := script.Respond(context.Background(), "session", []*genai.Content{user}, nil, false, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range reply.Content.Parts {
		fmt.Println("call", p.FunctionCall.Name, p.FunctionCall.Args["tag"])
	}
	big := genai.NewContentFromText(coretest.UserMessage(1, coretest.Marker(2), coretest.Generate(coretest.KindProseEnglish, 1000, 1)), genai.RoleUser)
	_, err = script.Respond(context.Background(), "session", []*genai.Content{big}, nil, false, nil)
	fmt.Println("overflow:", coretest.IsOverflowError(err))
	// Output:
	// call grep t0.s0.c0
	// call read_file t0.s0.c1
	// overflow: true
}
