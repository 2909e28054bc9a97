package voicetest

import (
	"errors"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// This file holds the runner's uses of pcm pieces that other branches are
// adding (WAV I/O, resampling, mixing, DTMF). Each helper is the one place
// to wire the pcm function when it lands.

var errPCMPending = errors.New("voicetest: this needs a pcm function that is not merged yet")

// encodeWAV encodes c as a WAV file. TODO: pcm.EncodeWAV.
func encodeWAV(c pcm.Chunk) ([]byte, error) { return nil, errPCMPending }


// readUserWAV reads a WAV file at the session rate. TODO: pcm.ReadWAVFile.
func readUserWAV(path string, rate int) (pcm.Chunk, error) { return pcm.Chunk{}, errPCMPending }


// dtmfTones returns in-band tones for digits: 100 ms per key at −10 dBFS
// per tone, 50 ms gaps.
func dtmfTones(digits string, rate int) (pcm.Chunk, error) {
	cfg := pcm.DefaultDTMFConfig()
	cfg.Gap = 50 * time.Millisecond
	return pcm.GenerateDTMF(digits, rate, cfg)
}
