package pcm

import "time"

// CellPhone returns the Effect of a mobile call's channel: a narrowband
// codec (LowBitrateCodec at 32 kbps, in the telephone band: ADPCM at the
// toll quality of G.726-32, about that of a mobile AMR-NB call),
// network jitter of 15 ms behind a 25 ms jitter buffer (late packets
// concealed), and about three dropouts a minute of 80–300 ms. The same
// seed gives the same losses.
func CellPhone(seed uint64) Effect {
	return Chain(
		LowBitrateCodec(32),
		Jitter(15*time.Millisecond, 25*time.Millisecond, 20*time.Millisecond, seed),
		Dropouts(3, 80*time.Millisecond, 300*time.Millisecond, seed+1),
	)
}

// Landline returns the Effect of a landline or a Twilio call: narrowband
// G.711 µ-law (G711(MuLaw)) after the telephone band.
func Landline() Effect { return Chain(TelephoneBand(), G711(MuLaw)) }

// Preset is a ready caller environment: where the caller is (a Scene),
// how their voice reaches the microphone (Voice), and the channel that
// carries both to the agent (Line). Use it as one Effect on each
// utterance (Effect), or give its parts to a runner that plays the scene
// continuously (voicetest.Config.Background).
type Preset struct {
	// Name is a short name ("noisy-cafe-cell-phone").
	Name string
	// Description says what it sounds like, in one line.
	Description string
	// Scene is the background; the zero Scene for none.
	Scene Scene
	// SNR is the scene's level under the voice, in dB, when the preset is
	// used as an Effect.
	SNR float64
	// Level is the scene's level in dBFS when it plays as a continuous
	// bed (Scene.Stream).
	Level float64
	// Voice transforms the voice alone, before the scene is added
	// (distance, muffling); nil for none.
	Voice Effect
	// Line is the channel, applied to the voice and the scene together
	// (a phone codec, jitter, dropouts); nil for none.
	Line Effect
}

// Effect returns the preset as one Effect for an utterance: the voice
// effect, then the scene at SNR (with seed), then the line.
func (p Preset) Effect(seed uint64) Effect {
	var bed Effect
	if p.Scene.Name() != "" {
		bed = p.Scene.Effect(p.SNR, seed)
	}
	return Chain(p.Voice, bed, p.Line)
}

// NoisyCafeOnCellPhone is a caller in a busy cafe on a mobile phone: the
// Cafe scene 10 dB under the voice (−32 dBFS as a bed) through CellPhone.
func NoisyCafeOnCellPhone(seed uint64) Preset {
	return Preset{Name: "noisy-cafe-cell-phone", Description: "a busy cafe, on a mobile phone",
		Scene: Cafe(), SNR: 10, Level: -32, Line: CellPhone(seed)}
}

// BusyStreetOnCellPhone is a caller walking down a city street on a
// mobile phone: the Street scene 8 dB under the voice through CellPhone.
func BusyStreetOnCellPhone(seed uint64) Preset {
	return Preset{Name: "busy-street-cell-phone", Description: "a city street with traffic, on a mobile phone",
		Scene: Street(), SNR: 8, Level: -30, Line: CellPhone(seed)}
}

// CarHandsFree is a driver on the car's hands-free kit: the voice from
// 60 cm away with the cabin's echo, the Car scene 6 dB under it, through
// CellPhone.
func CarHandsFree(seed uint64) Preset {
	return Preset{Name: "car-hands-free", Description: "driving, on the car's hands-free kit",
		Scene: Car(), SNR: 6, Level: -28,
		Voice: Chain(Distance(0.6, seed+2), Echo(90*time.Millisecond, 14, 2)),
		Line:  CellPhone(seed)}
}

// AirportOnCellPhone is a caller at a departure gate: the reverberant
// Airport scene 8 dB under the voice, through CellPhone.
func AirportOnCellPhone(seed uint64) Preset {
	return Preset{Name: "airport-cell-phone", Description: "a departure hall with announcements, on a mobile phone",
		Scene: Airport(), SNR: 8, Level: -30, Line: CellPhone(seed)}
}

// OfficeHeadset is a caller at an open-plan desk on a VoIP headset: the
// Office scene 15 dB under the voice, G.711 with light jitter.
func OfficeHeadset(seed uint64) Preset {
	return Preset{Name: "office-headset", Description: "an open-plan office, on a VoIP headset",
		Scene: Office(), SNR: 15, Level: -38,
		Line: Chain(G711(MuLaw), Jitter(8*time.Millisecond, 20*time.Millisecond, 20*time.Millisecond, seed))}
}

// WindyOutdoors is a caller outside in the wind on a mobile phone: the
// Wind scene 6 dB under the voice, through CellPhone.
func WindyOutdoors(seed uint64) Preset {
	return Preset{Name: "windy-outdoors", Description: "outdoors in gusty wind, on a mobile phone",
		Scene: Wind(), SNR: 6, Level: -28, Line: CellPhone(seed)}
}

// TVRoomSpeakerphone is a caller at home with the television on, on a
// speakerphone a metre away over a landline.
func TVRoomSpeakerphone(seed uint64) Preset {
	return Preset{Name: "tv-room-speakerphone", Description: "at home with the TV on, on a speakerphone over a landline",
		Scene: TVRoom(), SNR: 10, Level: -34,
		Voice: Distance(1, seed+2), Line: Landline()}
}

// Presets returns the library's presets built with seed, in a fixed
// order.
func Presets(seed uint64) []Preset {
	return []Preset{
		NoisyCafeOnCellPhone(seed), BusyStreetOnCellPhone(seed), CarHandsFree(seed), AirportOnCellPhone(seed),
		OfficeHeadset(seed), WindyOutdoors(seed), TVRoomSpeakerphone(seed),
	}
}
