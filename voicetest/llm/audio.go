package llm

import (
	"fmt"

	"github.com/voicetest-go/voicetest/voicetest"
)

// validateAudio checks the input audio of message i: only user messages
// carry it, and every clip has samples at a valid rate.
func validateAudio(i int, m voicetest.ChatMessage) error {
	if len(m.Audio) == 0 {
		return nil
	}
	if m.Role != voicetest.ChatUser {
		return fmt.Errorf("llm: message %d (%s) carries input audio; only user messages do (OpenAI's input_audio content part)", i, m.Role)
	}
	for j, a := range m.Audio {
		if err := a.Validate(); err != nil {
			return fmt.Errorf("llm: message %d audio %d: %w", i, j, err)
		}
	}
	return nil
}
