// Package silencegate keeps the silence of a line that never stops
// sending from being reported as the agent's speech. A WebRTC track or a
// phone call carries packets of silence between the agent's utterances;
// the runner would take them for speech (and never see the end of a
// turn). The gate drops them, except the short pauses inside an utterance,
// which it holds back and reports with the sound that follows, so that
// the pauses between words keep their length.
package silencegate

// Gate is one direction's silence gate. The zero value reports every
// sample as sound (Threshold 0); set Threshold and MaxPause first. It is
// not safe for concurrent use.
type Gate struct {
	// Threshold is the peak (of 32767) below which a packet is silence;
	// negative reports every packet.
	Threshold int
	// MaxPause is the longest silence, in samples, kept inside an
	// utterance; longer silence is dropped.
	MaxPause int

	held     []int16 // silence since the last sound, at most MaxPause
	speaking bool
}

// Process takes one packet and returns what to report: nil for silence
// (held or dropped), otherwise the silence held since the last sound
// followed by the packet. The result may alias the gate's buffer or
// samples, and is valid until the next call.
func (g *Gate) Process(samples []int16) []int16 {
	if g.Threshold < 0 {
		return samples
	}
	if Peak(samples) < g.Threshold {
		if g.speaking && len(g.held)+len(samples) <= g.MaxPause {
			g.held = append(g.held, samples...)
		} else {
			g.speaking, g.held = false, g.held[:0]
		}
		return nil
	}
	g.speaking = true
	if len(g.held) == 0 {
		return samples
	}
	out := append(g.held, samples...)
	g.held = out[:0:0]
	return out
}

// Peak returns the largest magnitude in samples.
func Peak(samples []int16) int {
	m := 0
	for _, s := range samples {
		v := int(s)
		if v < 0 {
			v = -v
		}
		m = max(m, v)
	}
	return m
}
