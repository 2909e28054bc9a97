package llm

import (
	"encoding/base64"
	"fmt"

	"github.com/openai/openai-go/v3"

	"github.com/voicetest-go/voicetest/voicetest"
)

// audioParts returns the content parts of a user message with input
// audio, in the shape of OpenAI's Chat Completions API for audio-capable
// models (platform.openai.com/docs/api-reference/chat/create, user message
// content parts; the audio guide, platform.openai.com/docs/guides/audio):
// the message's text as a "text" part, then for each clip its label as a
// "text" part and the clip as an "input_audio" part,
// {"data": <base64 WAV>, "format": "wav"}.
func audioParts(m voicetest.ChatMessage) ([]openai.ChatCompletionContentPartUnionParam, error) {
	var parts []openai.ChatCompletionContentPartUnionParam
	if m.Content != "" {
		parts = append(parts, openai.TextContentPart(m.Content))
	}
	for i, a := range m.Audio {
		if a.Label != "" {
			parts = append(parts, openai.TextContentPart(a.Label))
		}
		wav, err := a.WAV()
		if err != nil {
			return nil, fmt.Errorf("llm: input audio %d (%q): %w", i, a.Label, err)
		}
		parts = append(parts, openai.InputAudioContentPart(openai.ChatCompletionContentPartInputAudioInputAudioParam{
			Data: base64.StdEncoding.EncodeToString(wav), Format: "wav"}))
	}
	return parts, nil
}

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
