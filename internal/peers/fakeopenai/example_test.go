package fakeopenai_test

import (
	"context"
	"fmt"
	"log"

	"github.com/voicetest-go/voicetest/internal/peers/fakeopenai"
	"github.com/voicetest-go/voicetest/voicetest"
	"github.com/voicetest-go/voicetest/voicetest/llm"
)

// A test scripts the double's answers, points an OpenAI-compatible client
// at it, and then checks what the client sent. In a test, use
// fakeopenai.New(t), which closes the server when the test ends.
func Example() {
	srv := fakeopenai.Start()
	defer srv.Close()
	srv.QueueChat(fakeopenai.ChatReply{ToolCalls: []fakeopenai.ToolCall{
		{Name: "end_call", Arguments: `{"reason":"caller said goodbye"}`},
	}})

	client, err := llm.New(llm.WithBaseURL(srv.BaseURL()), llm.WithAPIKey(srv.APIKey()), llm.WithModel("gpt-4o-mini"))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := client.Complete(context.Background(), voicetest.ChatRequest{
		Messages:   []voicetest.ChatMessage{{Role: voicetest.ChatUser, Content: "Bye!"}},
		Tools:      []voicetest.ToolSpec{{Name: "end_call"}},
		ToolChoice: "end_call",
	})
	if err != nil {
		log.Fatal(err)
	}
	call := resp.Message.ToolCalls[0]
	fmt.Println(call.Name, string(call.Arguments))

	sent := srv.RequestsTo("/v1/chat/completions")[0]
	fmt.Println(sent.Status, len(sent.Body) > 0)
	// Output:
	// end_call {"reason":"caller said goodbye"}
	// 200 true
}
