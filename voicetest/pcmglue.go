package voicetest

import (
	"context"
	"fmt"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// This file holds the runner's uses of pcm's WAV and DTMF functions.

// encodeWAV encodes c as a 16-bit mono WAV file.
func encodeWAV(c pcm.Chunk) ([]byte, error) { return pcm.EncodeWAV(c) }

// readUserAudio reads an audio file for UserAudio (WAV directly; MP3, Ogg,
// FLAC and the rest through ffmpeg, see pcm.ReadAudioFile) and converts it
// to rate.
func readUserAudio(ctx context.Context, path string, rate int) (pcm.Chunk, error) {
	c, err := pcm.ReadAudioFile(ctx, path)
	if err != nil {
		return pcm.Chunk{}, fmt.Errorf("UserAudio: %w", err)
	}
	if c.IsEmpty() {
		return pcm.Chunk{}, fmt.Errorf("UserAudio: %s holds no audio", path)
	}
	if c.Rate != rate {
		if c, err = pcm.Resample(c, rate); err != nil {
			return pcm.Chunk{}, fmt.Errorf("UserAudio: %s: %w", path, err)
		}
	}
	return c, nil
}

// dtmfTones returns in-band tones for digits: 100 ms per key at −10 dBFS
// per tone, 50 ms gaps.
func dtmfTones(digits string, rate int) (pcm.Chunk, error) {
	cfg := pcm.DefaultDTMFConfig()
	cfg.Gap = 50 * time.Millisecond
	return pcm.GenerateDTMF(digits, rate, cfg)
}
