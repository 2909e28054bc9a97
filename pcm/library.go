package pcm

import "time"

// EffectInfo describes one effect of the library: its name, what it does,
// and how to build it with its default settings.
type EffectInfo struct {
	// Name is the effect's short name ("reverb").
	Name string
	// Group is "background", "phone", "room", "voice" or "level".
	Group string
	// Func is the Go function that builds it ("Reverb").
	Func string
	// Description says what it does, in one line.
	Description string
	// New builds the effect with its default settings and seed.
	New func(seed uint64) Effect
}

// EffectLibrary returns every named effect of the package with its default
// settings, grouped, in a fixed order. Each is deterministic for its
// seed and composes with Chain.
func EffectLibrary() []EffectInfo {
	scene := func(s func() Scene) func(uint64) Effect {
		return func(seed uint64) Effect { return s().Effect(10, seed) }
	}
	return []EffectInfo{
		{"cafe", "background", "Cafe", "a busy cafe: eight synthetic talkers, a pink-noise murmur, cups and cutlery", scene(Cafe)},
		{"street", "background", "Street", "a city street: traffic rumble swelling as cars pass, passers-by, a horn now and then", scene(Street)},
		{"office", "background", "Office", "an open-plan office: ventilation hum, distant colleagues, bursts of typing", scene(Office)},
		{"car", "background", "Car", "inside a moving car: road noise, a 30 Hz engine drone, wind rush", scene(Car)},
		{"airport", "background", "Airport", "a departure hall: twelve talkers in 1.5 s of reverberation, air conditioning, an announcement chime", scene(Airport)},
		{"wind", "background", "Wind", "gusty wind buffeting the microphone below 250 Hz over a broadband rush", scene(Wind)},
		{"tv", "background", "TVRoom", "a TV in the room: a four-chord music bed with a beat, a presenter through a small speaker", scene(TVRoom)},
		{"babble", "background", "Babble", "crowd babble from any talkers (SynthTalkers synthesises them), at an SNR", func(seed uint64) Effect {
			return Babble(SynthTalkers(6, 3*time.Second, Rate16k, seed), 10, seed)
		}},
		{"white-noise", "background", "WhiteNoise", "Gaussian white noise (line hiss) at an SNR", func(seed uint64) Effect { return WhiteNoise(20, seed) }},
		{"pink-noise", "background", "PinkNoise", "pink noise, −3 dB per octave, at an SNR", func(seed uint64) Effect { return PinkNoise(15, seed) }},
		{"brown-noise", "background", "BrownNoise", "brown noise, −6 dB per octave (rumble), at an SNR", func(seed uint64) Effect { return BrownNoise(15, seed) }},
		{"hum", "background", "Hum", "50/60 Hz mains hum with harmonics, at an SNR", func(uint64) Effect { return Hum(50, 20) }},
		{"telephone-band", "phone", "TelephoneBand", "the 300–3400 Hz telephone band (8th-order Butterworth edges)", func(uint64) Effect { return TelephoneBand() }},
		{"g711", "phone", "G711", "narrowband G.711 µ-law or A-law: 8 kHz, 8-bit companding, and back", func(uint64) Effect { return G711(MuLaw) }},
		{"low-bitrate-codec", "phone", "LowBitrateCodec", "a mobile-style narrowband ADPCM codec at 16–40 kbps", func(uint64) Effect { return LowBitrateCodec(16) }},
		{"packet-loss", "phone", "PacketLoss", "random lost packets with packet loss concealment", func(seed uint64) Effect { return PacketLoss(0.05, 0, seed) }},
		{"jitter", "phone", "Jitter", "network delay jitter behind a fixed jitter buffer; late packets concealed", func(seed uint64) Effect {
			return Jitter(20*time.Millisecond, 20*time.Millisecond, 0, seed)
		}},
		{"dropouts", "phone", "Dropouts", "the line cutting out for 80–400 ms now and then, as a fading radio link does", func(seed uint64) Effect {
			return Dropouts(20, 80*time.Millisecond, 400*time.Millisecond, seed)
		}},
		{"cell-phone", "phone", "CellPhone", "a mobile channel: low-bitrate codec, jitter, dropouts", CellPhone},
		{"landline", "phone", "Landline", "a landline: telephone band and G.711 µ-law", func(uint64) Effect { return Landline() }},
		{"reverb", "room", "Reverb", "a room from a synthetic impulse response (early reflections, decaying noise tail)", func(seed uint64) Effect {
			return Reverb(500*time.Millisecond, 0.4, seed)
		}},
		{"echo", "room", "Echo", "fading repeats of the voice, as a hands-free phone or an echo path gives", func(uint64) Effect { return Echo(120*time.Millisecond, 10, 3) }},
		{"clip", "room", "Clip", "hard clipping at a level, as an overdriven microphone or codec", func(uint64) Effect { return Clip(-12) }},
		{"overdrive", "room", "Overdrive", "soft (tanh) clipping of a cheap, overloaded microphone", func(uint64) Effect { return Overdrive(12) }},
		{"volume-ramp", "room", "VolumeRamp", "a gain moving from one level to another (walking away from the phone)", func(uint64) Effect { return VolumeRamp(0, -18) }},
		{"distance", "room", "Distance", "the talker metres from the microphone: quieter, duller, more room", func(seed uint64) Effect { return Distance(1.5, seed) }},
		{"muffled", "room", "Muffled", "a hand over the microphone or a phone in a pocket: a steep low-pass", func(uint64) Effect { return Muffled(800) }},
		{"tempo", "voice", "Tempo", "faster or slower speech at the same pitch (WSOLA); changes the length", func(uint64) Effect { return Tempo(1.25) }},
		{"pitch", "voice", "Pitch", "a higher or lower voice at the same tempo and length", func(uint64) Effect { return Pitch(3) }},
		{"robotic", "voice", "Robotic", "a metallic robot voice by ring modulation", func(uint64) Effect { return Robotic(50) }},
		{"gain", "level", "Gain", "a fixed gain in dB", func(uint64) Effect { return Gain(-6) }},
		{"normalize", "level", "Normalize", "scaling to an active speech level in dBFS", func(uint64) Effect { return Normalize(-26) }},
	}
}
