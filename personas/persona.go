package personas

import (
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"time"

	"github.com/voicetest-go/voicetest/pcm"
)

// Persona is a caller profile: who the caller is and how they sound. An
// LLM user (LLM) puts Description and Style into its prompt; every user
// built from a persona (LLM, and Scripted or Files with As) gives its
// utterances the persona's voice and effects.
//
// A Persona is a plain value: copy it and change fields to make a
// variant (p := personas.Elderly; p.Speed = 0.7).
type Persona struct {
	// Name names the persona in logs and reports ("rushed").
	Name string
	// Description says who the caller is and what they are like, for the
	// LLM that plays them.
	Description string
	// Style says how the caller talks (sentence length, fillers,
	// politeness), for the LLM that plays them.
	Style string
	// Voice is the caller's voice in each engine's terms.
	Voice Voice
	// Speed is the speaking rate (1 normal; 0 the engine's default). A
	// user built from the persona puts it in each Utterance's Speed
	// (unless the utterance has its own), and the runner passes it to the
	// TTS engine as SpeechRequest.Speed.
	Speed float64
	// Effects transform the caller's audio after TTS: background noise, a
	// telephone band, packet loss (pcm's effects and presets, e.g.
	// pcm.NoisyCafeOnCellPhone(1).Effect(2)). Nil means clean audio. The
	// library's effects are deterministic (fixed seeds).
	Effects pcm.Effect
	// Instructions steer the TTS delivery of every line ("hesitant,
	// elderly, a little hard of hearing") on engines that take them
	// (OpenAI's gpt-4o-mini-tts); others ignore them.
	Instructions string
	// Interrupt is how the caller barges in on the agent; the zero value
	// never does.
	Interrupt Interruption
}

// Validate reports what is wrong with p, if anything.
func (p Persona) Validate() error {
	if p.Name == "" {
		return errors.New("personas: Persona.Name is empty; name the persona (it appears in logs and reports)")
	}
	if math.IsNaN(p.Speed) || p.Speed < 0 || p.Speed > 4 {
		return fmt.Errorf("personas: persona %q: Speed %v is out of range; use 0 (engine default) or a rate from 0.25 to 4", p.Name, p.Speed)
	}
	if p.Speed != 0 && p.Speed < 0.25 {
		return fmt.Errorf("personas: persona %q: Speed %v is out of range; use 0 (engine default) or a rate from 0.25 to 4", p.Name, p.Speed)
	}
	if err := p.Interrupt.Validate(); err != nil {
		return fmt.Errorf("personas: persona %q: %w", p.Name, err)
	}
	return nil
}

// Voice names a persona's voice in the terms of each TTS engine of the
// speech package. Voice names are not portable between engines, so a
// user built from a persona sends one only when told which engine speaks
// (the Engine method of LLMUser, ScriptedUser); otherwise the runner's
// Config.Voice (or the engine's default) is used.
type Voice struct {
	// OpenAI is an OpenAI TTS voice ("nova", "onyx").
	OpenAI string
	// Flite is a flite voice ("slt", "kal", "awb", "rms").
	Flite string
	// Espeak is an espeak-ng voice ("en-us", "en-gb+f3", "es").
	Espeak string
}

// For returns the voice for the named engine: "openai", "flite" or
// "espeak" (a speech.TTSByName name such as "flite/kal" counts by its
// engine part). Other engines and an empty name give "".
func (v Voice) For(engine string) string {
	for i := 0; i < len(engine); i++ {
		if engine[i] == '/' {
			engine = engine[:i]
			break
		}
	}
	switch engine {
	case "openai":
		return v.OpenAI
	case "flite":
		return v.Flite
	case "espeak", "espeak-ng":
		return v.Espeak
	}
	return ""
}

// Interruption is how a caller barges in on the agent: on each agent turn,
// with probability Probability, after a delay drawn uniformly from
// [MinDelay, MaxDelay] after the agent starts speaking.
//
// Decide makes the decision for one turn, repeatably for a seed. An
// LLMUser asks it in InterruptDecision (it implements
// voicetest.Interrupter), so under a Proceed step the runner barges in
// with the caller's next line when it says so; a scripted user never
// interrupts on its own (use the Interrupt step).
type Interruption struct {
	// Probability is the chance, from 0 to 1, of barging in on an agent
	// turn.
	Probability float64
	// MinDelay and MaxDelay bound the time from the start of the agent's
	// speech to the barge-in.
	MinDelay, MaxDelay time.Duration
	// Phrases are what the caller says when barging in without an LLM to
	// choose; empty means DefaultInterruptPhrases.
	Phrases []string
}

// DefaultInterruptPhrases are barge-in lines for callers without their own.
func DefaultInterruptPhrases() []string {
	return []string{"Sorry, wait.", "Hold on, hold on.", "No, that's not what I asked.", "Can I just say something?", "Actually, one second."}
}

// Validate reports what is wrong with in, if anything.
func (in Interruption) Validate() error {
	if math.IsNaN(in.Probability) || in.Probability < 0 || in.Probability > 1 {
		return fmt.Errorf("Interruption.Probability %v must be between 0 and 1", in.Probability)
	}
	if in.MinDelay < 0 || in.MaxDelay < in.MinDelay {
		return fmt.Errorf("Interruption delays [%v, %v] are invalid; need 0 <= MinDelay <= MaxDelay", in.MinDelay, in.MaxDelay)
	}
	return nil
}

// Decide says whether the caller barges in on the agent's turn-th turn of
// the conversation named scenario, and after how long, and with which of
// the phrases. The answer depends only on its arguments (and in), so the
// same seed gives the same interruptions on every run; an invalid in
// never interrupts.
func (in Interruption) Decide(seed uint64, scenario string, turn int) (interrupt bool, after time.Duration, phrase string) {
	if in.Probability <= 0 || in.Validate() != nil {
		return false, 0, ""
	}
	h := fnv.New64a()
	fmt.Fprintf(h, "%s\x00%d", scenario, turn)
	r := rand.New(rand.NewPCG(seed, h.Sum64()))
	if r.Float64() >= in.Probability {
		return false, 0, ""
	}
	after = in.MinDelay
	if span := in.MaxDelay - in.MinDelay; span > 0 {
		after += time.Duration(r.Int64N(int64(span) + 1))
	}
	phrases := in.Phrases
	if len(phrases) == 0 {
		phrases = DefaultInterruptPhrases()
	}
	return true, after, phrases[r.IntN(len(phrases))]
}

// The library of ready personas. Each is a value; copy it to vary it.
var (
	// Patient is a calm, polite caller who lets the agent finish and
	// answers what is asked.
	Patient = Persona{
		Name:        "patient",
		Description: "A calm, friendly adult with time to spare. You listen to the whole answer, answer what you are asked, and accept reasonable alternatives.",
		Style:       "Polite and relaxed: complete short sentences, a please or thank you now and then, no hurry.",
		Voice:       Voice{OpenAI: "sage", Flite: "slt", Espeak: "en-us+f2"},
		Speed:       1,
	}
	// Rushed is a caller in a hurry: terse, impatient, fast.
	Rushed = Persona{
		Name:        "rushed",
		Description: "A busy professional calling between meetings. You want this done in as few turns as possible, give several details at once, and get impatient with long answers or repeated questions.",
		Style:       "Terse and fast: fragments of a few words, no small talk, sometimes 'yeah, yeah' or 'just book it'.",
		Voice:       Voice{OpenAI: "ash", Flite: "kal", Espeak: "en-us+m3"},
		Speed:       1.25,
	}
	// Confused is a caller unsure of what they need, who mixes up details
	// and asks for things to be repeated.
	Confused = Persona{
		Name:        "confused",
		Description: "A caller who is not sure how this service works. You mix up details (dates, names, numbers), correct yourself, and ask the agent to repeat or explain things.",
		Style:       "Hesitant: 'um', 'wait, what?', half-finished sentences, questions back to the agent.",
		Voice:       Voice{OpenAI: "fable", Flite: "awb", Espeak: "en-gb+m2"},
		Speed:       0.95,
	}
	// Elderly is an older caller on a landline: slow, courteous, hard of
	// hearing.
	Elderly = Persona{
		Name:        "elderly",
		Description: "A retired person in their eighties calling from a landline. You are courteous but a little hard of hearing, tell small bits of context nobody asked for, and need numbers and times repeated slowly.",
		Style:       "Slow and courteous: longer sentences with small digressions, 'dear', 'pardon?', spelled-out numbers.",
		Voice:       Voice{OpenAI: "ballad", Flite: "rms", Espeak: "en-us+m7"},
		Speed:       0.8,
		Effects:     pcm.TelephoneBand(),
	}
	// NonNative is a caller speaking English as a second language.
	NonNative = Persona{
		Name:        "non-native",
		Description: "A caller whose first language is not English. You know what you want but sometimes use a wrong word or word order, and ask for simpler words when the agent talks fast or uses idioms.",
		Style:       "Simple grammar, present tense, an occasional wrong preposition or article; you say 'sorry, again please?' when you do not understand.",
		// An espeak voice of another language reading English gives an accent.
		Voice: Voice{OpenAI: "coral", Flite: "awb", Espeak: "es"},
		Speed: 0.9,
	}
	// NoisyStreet is a caller on a busy street: crowd babble and traffic
	// rumble under their voice.
	NoisyStreet = Persona{
		Name:        "noisy-street",
		Description: "A caller walking down a busy street. You sometimes miss what the agent says and ask for it again, and keep your answers short.",
		Style:       "Short, slightly raised sentences; 'sorry, it's loud here', 'say that again?'.",
		Voice:       Voice{OpenAI: "echo", Flite: "kal", Espeak: "en-us+m1"},
		Speed:       1.05,
		Effects:     streetEffect(),
	}
	// BadPhoneLine is a caller on a poor connection: telephone band,
	// packet loss, line hiss and clipping.
	BadPhoneLine = Persona{
		Name:        "bad-phone-line",
		Description: "A caller on a poor mobile connection. Parts of what you say drop out, so you repeat key details, and you check that the agent got them.",
		Style:       "Plain sentences; you repeat numbers and names ('that's two, TWO people'), and ask 'did you get that?'.",
		Voice:       Voice{OpenAI: "onyx", Flite: "slt", Espeak: "en-us+f3"},
		Speed:       1,
		Effects: pcm.Chain(
			pcm.TelephoneBand(),
			pcm.PacketLoss(0.06, 20*time.Millisecond, 0xBAD1),
			pcm.WhiteNoise(25, 0xBAD2),
			pcm.Clip(-4),
		),
	}
	// Interrupter is a caller who talks over the agent: about every other
	// agent turn, half a second to two seconds into it.
	Interrupter = Persona{
		Name:        "interrupter",
		Description: "An impatient caller who often cuts the agent off before it finishes, to correct it, to add a detail, or to skip ahead.",
		Style:       "Abrupt: starts with 'no, wait', 'sorry but', 'just', changes details mid-way.",
		Voice:       Voice{OpenAI: "ash", Flite: "kal", Espeak: "en-us+m4"},
		Speed:       1.15,
		Interrupt: Interruption{
			Probability: 0.5,
			MinDelay:    500 * time.Millisecond,
			MaxDelay:    2 * time.Second,
			Phrases:     []string{"No, wait.", "Sorry, but that's not it.", "Just a second, let me finish.", "Hold on."},
		},
	}
)

// Library returns the ready personas, in a fixed order.
func Library() []Persona {
	return []Persona{Patient, Rushed, Confused, Elderly, NonNative, NoisyStreet, BadPhoneLine, Interrupter}
}
