package personas_test

import (
	"math"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/voicetest-go/voicetest/pcm"
	"github.com/voicetest-go/voicetest/personas"
	"github.com/voicetest-go/voicetest/voicetest/fixtures"
	"github.com/voicetest-go/voicetest/voicetest/speech"
)

// openAIVoices are the built-in voices of OpenAI's speech endpoint.
var openAIVoices = []string{"alloy", "ash", "ballad", "coral", "echo", "fable", "onyx", "nova", "sage", "shimmer", "verse", "marin", "cedar"}

func TestLibraryPersonasAreValid(t *testing.T) {
	lib := personas.Library()
	require.Len(t, lib, 8)
	names := map[string]bool{}
	for _, p := range lib {
		t.Run(p.Name, func(t *testing.T) {
			require.NoError(t, p.Validate())
			assert.False(t, names[p.Name], "duplicate name")
			names[p.Name] = true
			assert.NotEmpty(t, p.Description)
			assert.NotEmpty(t, p.Style)
			assert.Contains(t, openAIVoices, p.Voice.OpenAI)
			assert.Contains(t, speech.FliteVoices, p.Voice.Flite)
			assert.NotEmpty(t, p.Voice.Espeak)
			assert.GreaterOrEqual(t, p.Speed, 0.5)
			assert.LessOrEqual(t, p.Speed, 1.5)
		})
	}
	assert.Greater(t, personas.Rushed.Speed, personas.Patient.Speed)
	assert.Less(t, personas.Elderly.Speed, personas.Patient.Speed)
	assert.Greater(t, personas.Interrupter.Interrupt.Probability, 0.0)
	assert.Zero(t, personas.Patient.Interrupt.Probability)
}

// speechLike is two seconds of word-like tones with pauses at 24 kHz.
func speechLike() pcm.Chunk {
	return fixtures.WordTones("please book a table for two tonight", 24000)
}

// snrDB is the level of clean's active part over the level of what the
// effect added.
func snrDB(clean, noisy pcm.Chunk) float64 {
	diff := make([]int16, clean.Len())
	for i := range diff {
		diff[i] = int16(max(-32768, min(32767, int(noisy.Samples[i])-int(clean.Samples[i]))))
	}
	return pcm.DBFS(pcm.ActiveRMS(clean)) - pcm.DBFS(pcm.RMS(pcm.Chunk{Rate: clean.Rate, Samples: diff}))
}

func TestLibraryEffectsAreDeterministic(t *testing.T) {
	in := speechLike()
	orig := slices.Clone(in.Samples)
	for _, p := range personas.Library() {
		if p.Effects == nil {
			continue
		}
		t.Run(p.Name, func(t *testing.T) {
			a, b := p.Effects(in), p.Effects(in)
			assert.Equal(t, in.Rate, a.Rate)
			require.Equal(t, in.Len(), a.Len())
			assert.True(t, slices.Equal(a.Samples, b.Samples), "same input, same output")
			assert.True(t, slices.Equal(orig, in.Samples), "the input is not modified")
			assert.False(t, slices.Equal(a.Samples, in.Samples), "the effect changes the audio")
		})
	}
}

func TestNoisyStreetSNR(t *testing.T) {
	in := speechLike()
	got := snrDB(in, personas.NoisyStreet.Effects(in))
	t.Logf("NoisyStreet: SNR %.2f dB (babble at 12 dB and brown noise at 18 dB: 11.0 dB combined)", got)
	assert.InDelta(t, 11.0, got, 1.5)
}

func TestTelephonePersonasCutLowFrequencies(t *testing.T) {
	n := 24000
	hum := make([]int16, n)
	for i := range hum {
		hum[i] = int16(8000 * math.Sin(2*math.Pi*100*float64(i)/24000))
	}
	in := pcm.Chunk{Rate: 24000, Samples: hum}
	for _, p := range []personas.Persona{personas.Elderly, personas.BadPhoneLine} {
		out := p.Effects(in)
		// Measure after the filters settle.
		drop := pcm.DBFS(pcm.RMS(in.Slice(200*time.Millisecond, time.Second))) - pcm.DBFS(pcm.RMS(out.Slice(200*time.Millisecond, time.Second)))
		t.Logf("%s: a 100 Hz hum drops %.1f dB", p.Name, drop)
		assert.Greater(t, drop, 20.0, p.Name)
	}
}

func TestPersonaValidate(t *testing.T) {
	p := personas.Patient
	p.Name = ""
	assert.ErrorContains(t, p.Validate(), "Name is empty")
	for _, speed := range []float64{-1, 0.1, 5, math.NaN()} {
		p := personas.Patient
		p.Speed = speed
		assert.ErrorContains(t, p.Validate(), "Speed", "speed %v", speed)
	}
	p = personas.Patient
	p.Speed = 0
	assert.NoError(t, p.Validate(), "0 is the engine's default")
	p.Interrupt = personas.Interruption{Probability: 1.5}
	assert.ErrorContains(t, p.Validate(), "Probability 1.5")
	p.Interrupt = personas.Interruption{Probability: 0.5, MinDelay: time.Second, MaxDelay: time.Millisecond}
	assert.ErrorContains(t, p.Validate(), "MinDelay <= MaxDelay")
}

func TestVoiceFor(t *testing.T) {
	v := personas.Rushed.Voice
	assert.Equal(t, "ash", v.For("openai"))
	assert.Equal(t, "kal", v.For("flite"))
	assert.Equal(t, "kal", v.For("flite/slt"))
	assert.Equal(t, v.Espeak, v.For("espeak"))
	assert.Equal(t, "", v.For(""))
	assert.Equal(t, "", v.For("elevenlabs"))
}

func TestInterruptionDecide(t *testing.T) {
	in := personas.Interrupter.Interrupt
	hits := 0
	const turns = 4000
	for turn := range turns {
		ok, after, phrase := in.Decide(7, "scenario", turn)
		ok2, after2, phrase2 := in.Decide(7, "scenario", turn)
		require.Equal(t, ok, ok2)
		require.Equal(t, after, after2)
		require.Equal(t, phrase, phrase2)
		if !ok {
			assert.Zero(t, after)
			continue
		}
		hits++
		assert.GreaterOrEqual(t, after, in.MinDelay)
		assert.LessOrEqual(t, after, in.MaxDelay)
		assert.Contains(t, in.Phrases, phrase)
	}
	rate := float64(hits) / turns
	t.Logf("Interrupter barged in on %.3f of %d turns (probability %.2f)", rate, turns, in.Probability)
	assert.InDelta(t, in.Probability, rate, 0.03)

	// Another seed or scenario gives other decisions.
	differ := 0
	for turn := range 100 {
		a, _, _ := in.Decide(7, "scenario", turn)
		b, _, _ := in.Decide(8, "scenario", turn)
		c, _, _ := in.Decide(7, "other", turn)
		if a != b || a != c {
			differ++
		}
	}
	assert.Greater(t, differ, 20)

	never := personas.Interruption{}
	ok, _, _ := never.Decide(1, "s", 1)
	assert.False(t, ok)
	always := personas.Interruption{Probability: 1, MinDelay: time.Second, MaxDelay: time.Second}
	ok, after, phrase := always.Decide(1, "s", 1)
	assert.True(t, ok)
	assert.Equal(t, time.Second, after)
	assert.Contains(t, personas.DefaultInterruptPhrases(), phrase)
	invalid := personas.Interruption{Probability: 2}
	ok, _, _ = invalid.Decide(1, "s", 1)
	assert.False(t, ok, "an invalid Interruption never interrupts")
}
