package voicetest

import (
	"encoding/json"
	"fmt"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/voicetest/cache"
)

// InputAudio is a clip of audio given to an audio-capable model as input,
// in a user ChatMessage (OpenAI's "input_audio" content part, sent as a
// WAV file). An audio judge sends the call's audio this way.
//
// Encoded as JSON, as in a cache key, a clip is its digest
// (cache.AudioDigest of its samples at its rate), its length and its
// label, not its samples: the same audio asks the same question, and an
// entry stays small and readable.
type InputAudio struct {
	// Label, when set, is sent as text just before the clip ("Turn 2, the
	// agent:").
	Label string
	// Audio is the clip, PCM16 mono at its rate.
	Audio pcm.Chunk
}

// Digest returns the clip's content hash: cache.AudioDigest of its
// samples at its rate.
func (a InputAudio) Digest() string { return cache.AudioDigest(a.Audio.Rate, a.Audio.Bytes()) }

// WAV returns the clip as a WAV file.
func (a InputAudio) WAV() ([]byte, error) { return encodeWAV(a.Audio) }

// Validate reports a clip that cannot be sent: no valid rate, or no
// samples.
func (a InputAudio) Validate() error {
	if err := a.Audio.Validate(); err != nil {
		return fmt.Errorf("input audio %q: %w", a.Label, err)
	}
	if a.Audio.IsEmpty() {
		return fmt.Errorf("input audio %q holds no samples", a.Label)
	}
	return nil
}

// MarshalJSON encodes the clip as its label, rate, length and digest.
func (a InputAudio) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Label      string `json:"label,omitempty"`
		Rate       int    `json:"rate"`
		Samples    int    `json:"samples"`
		DurationMs int64  `json:"duration_ms"`
		Digest     string `json:"digest"`
	}{a.Label, a.Audio.Rate, len(a.Audio.Samples), a.Audio.Duration().Milliseconds(), a.Digest()})
}
