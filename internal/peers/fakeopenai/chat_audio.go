package fakeopenai

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// InputAudio is an "input_audio" content part of a chat message, as
// OpenAI's Chat Completions API takes audio input for audio-capable models
// (API reference, platform.openai.com/docs/api-reference/chat/create: a
// user message's content part {"type": "input_audio", "input_audio":
// {"data": <base64>, "format": "wav" | "mp3"}}; the audio guide,
// platform.openai.com/docs/guides/audio; openai-go v3.95.0
// ChatCompletionContentPartInputAudioParam). Only user messages carry it.
type InputAudio struct {
	// Format is "wav" or "mp3".
	Format string
	// Data is the decoded audio file.
	Data []byte
	// Duration is the length of a WAV file's audio (zero for mp3, which
	// the double does not decode).
	Duration time.Duration
	// TextBefore is the text of the content parts just before this one
	// (a label such as "Turn 2, the agent:").
	TextBefore string
}

// messageContent returns the text of a message's content (a string, or
// its "text" parts joined) and its input audio. Content parts follow the
// API reference: "text" in every role, "input_audio" in user messages
// only; other part types are refused, since the double cannot read them.
func messageContent(p, role string, raw json.RawMessage) (string, []InputAudio, *APIError) {
	if raw == nil || string(raw) == "null" {
		return "", nil, nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil, nil
	}
	var parts []struct {
		Type       string `json:"type"`
		Text       string `json:"text"`
		InputAudio *struct {
			Data   *string `json:"data"`
			Format string  `json:"format"`
		} `json:"input_audio"`
	}
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", nil, badRequest(p+".content", "Invalid type for '%s.content': expected a string or an array of content parts, but got %s.", p, jsonKind(raw))
	}
	var b, pending strings.Builder
	var audio []InputAudio
	for j, part := range parts {
		pp := fmt.Sprintf("%s.content[%d]", p, j)
		switch part.Type {
		case "text":
			b.WriteString(part.Text)
			pending.WriteString(part.Text)
		case "input_audio":
			if role != "user" {
				return "", nil, badRequest(pp+".type", "Invalid value: 'input_audio'. Content parts of role '%s' may only be of type 'text'; input_audio is for user messages.", role)
			}
			a, e := inputAudio(pp, part.InputAudio)
			if e != nil {
				return "", nil, e
			}
			a.TextBefore = pending.String()
			pending.Reset()
			audio = append(audio, a)
		default:
			return "", nil, badRequest(pp+".type", "The fakeopenai test double accepts only text and input_audio content parts, not %q.", part.Type)
		}
	}
	return b.String(), audio, nil
}

func inputAudio(pp string, ia *struct {
	Data   *string `json:"data"`
	Format string  `json:"format"`
}) (InputAudio, *APIError) {
	switch {
	case ia == nil:
		return InputAudio{}, badRequest(pp+".input_audio", "Missing required parameter: '%s.input_audio'.", pp)
	case ia.Data == nil:
		return InputAudio{}, badRequest(pp+".input_audio.data", "Missing required parameter: '%s.input_audio.data'.", pp)
	case ia.Format != "wav" && ia.Format != "mp3":
		return InputAudio{}, badRequest(pp+".input_audio.format", "Invalid value: '%s'. Supported values are: 'wav' and 'mp3'.", ia.Format)
	}
	data, err := base64.StdEncoding.DecodeString(*ia.Data)
	if err != nil {
		return InputAudio{}, badRequest(pp+".input_audio.data", "Invalid '%s.input_audio.data': the audio is not valid base64 (%v).", pp, err)
	}
	a := InputAudio{Format: ia.Format, Data: data}
	if ia.Format == "wav" {
		d, ok := wavDuration(data)
		if !ok {
			return InputAudio{}, badRequest(pp+".input_audio.data", "Invalid '%s.input_audio.data': the audio is not a WAV file of PCM audio, as format 'wav' says.", pp)
		}
		a.Duration = d
	}
	return a, nil
}
