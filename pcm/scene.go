package pcm

import (
	"math"
	"math/rand/v2"
	"time"
)

// A Scene is a background soundscape: what a caller's microphone picks
// up around their voice in a cafe, on a street, in a car. It is made of
// layers (coloured noise, babble, a music bed, engine hum) and random
// events (cutlery, horns, keyboard clicks, announcements), synthesised
// from a seed, with no recorded sample (babble comes from SynthTalkers
// unless WithTalkers gives recordings).
//
// A Scene is used two ways: as an Effect (Scene.Effect: the scene under
// one utterance at a signal-to-noise ratio) or as a stream (Scene.Stream:
// a continuous bed, rendered piece by piece at an absolute level, which a
// runner plays under the caller's speech, through silences and between
// turns). The zero Scene is silent.
type Scene struct {
	name    string
	layers  []sceneLayer
	talkers []Chunk
}

type layerKind int

const (
	layerNoise layerKind = iota
	layerBabble
	layerEvents
	layerMusic
	layerEngine
)

type noiseColor int

const (
	colorWhite noiseColor = iota
	colorPink
	colorBrown
)

type eventKind int

const (
	eventClink eventKind = iota
	eventHorn
	eventKeys
	eventChime
)

// sceneLayer is one layer of a Scene: its kind, level relative to the
// other layers (dB; a steady layer's RMS, an event's peak) and settings.
type sceneLayer struct {
	kind   layerKind
	gainDB float64
	// noise
	color  noiseColor
	lo, hi float64 // band edges, Hz (0: none)
	swell  float64 // slow level changes per second (0: steady)
	depth  float64 // their depth, dB
	// babble
	voices int
	reverb time.Duration // a streaming room reverberation (0: dry)
	// events
	event  eventKind
	perMin float64
}

// Name returns the scene's name ("cafe"), or "" for the zero Scene.
func (s Scene) Name() string { return s.name }

// WithTalkers returns a copy of s whose babble is made of excerpts of
// talkers (speech recordings at any rate, such as engine-spoken lines)
// instead of synthetic talkers. The recordings are not modified and may
// be shared; empty ones and ones with no valid rate are ignored.
func (s Scene) WithTalkers(talkers ...Chunk) Scene {
	c := s
	c.talkers = nil
	for _, t := range talkers {
		if t.Rate > 0 && len(t.Samples) > 0 {
			c.talkers = append(c.talkers, t)
		}
	}
	return c
}

// Cafe is a busy cafe: a room of talkers (eight voices, dulled by
// distance), a low murmur of pink noise, and cups and cutlery clinking
// about twenty times a minute.
func Cafe() Scene {
	return Scene{name: "cafe", layers: []sceneLayer{
		{kind: layerBabble, voices: 8, hi: 3500, reverb: 500 * time.Millisecond},
		{kind: layerNoise, color: colorPink, gainDB: -8, hi: 2000},
		{kind: layerEvents, event: eventClink, gainDB: 4, perMin: 20},
	}}
}

// Street is a city street: traffic rumble (brown noise below 500 Hz that
// swells as cars pass), a few passers-by talking, and a car horn about
// twice a minute.
func Street() Scene {
	return Scene{name: "street", layers: []sceneLayer{
		{kind: layerNoise, color: colorBrown, hi: 500, swell: 0.25, depth: 12},
		{kind: layerNoise, color: colorPink, gainDB: -10, lo: 500, hi: 4000, swell: 0.25, depth: 6},
		{kind: layerBabble, voices: 3, gainDB: -8, hi: 4000},
		{kind: layerEvents, event: eventHorn, gainDB: 2, perMin: 2},
	}}
}

// Office is an open-plan office: ventilation hum (pink noise below
// 400 Hz), distant colleagues talking, and bursts of keyboard typing.
func Office() Scene {
	return Scene{name: "office", layers: []sceneLayer{
		{kind: layerNoise, color: colorPink, hi: 400},
		{kind: layerBabble, voices: 4, gainDB: -4, hi: 2500, reverb: 300 * time.Millisecond},
		{kind: layerEvents, event: eventKeys, gainDB: 0, perMin: 12},
	}}
}

// Car is the inside of a moving car: road noise (brown noise below
// 300 Hz), the engine's low harmonic drone around 30 Hz, and wind
// rushing past (band noise from 300 Hz to 2 kHz).
func Car() Scene {
	return Scene{name: "car", layers: []sceneLayer{
		{kind: layerNoise, color: colorBrown, hi: 300},
		{kind: layerEngine, gainDB: -3},
		{kind: layerNoise, color: colorPink, gainDB: -12, lo: 300, hi: 2000, swell: 0.1, depth: 4},
	}}
}

// Airport is a departure hall: a large crowd in a reverberant hall
// (twelve voices, 1.5 s of reverberation), a steady air-conditioning
// rush, and the three-note chime of an announcement about once a
// minute.
func Airport() Scene {
	return Scene{name: "airport", layers: []sceneLayer{
		{kind: layerBabble, voices: 12, reverb: 1500 * time.Millisecond, hi: 4000},
		{kind: layerNoise, color: colorPink, gainDB: -10, hi: 3000},
		{kind: layerEvents, event: eventChime, gainDB: 6, perMin: 1},
	}}
}

// Wind is a caller outdoors in the wind: low-frequency buffeting of the
// microphone (brown noise below 250 Hz in strong gusts about every two
// seconds) over a broadband rush.
func Wind() Scene {
	return Scene{name: "wind", layers: []sceneLayer{
		{kind: layerNoise, color: colorBrown, hi: 250, swell: 0.5, depth: 14},
		{kind: layerNoise, color: colorPink, gainDB: -9, lo: 250, hi: 6000, swell: 0.3, depth: 6},
	}}
}

// TVRoom is a living room with the television on: a music-like bed (a
// four-chord progression of harmonic tones on a half-second beat, with a
// kick drum), a presenter talking through the TV's small speaker (one
// voice, 300–3400 Hz), and a little room reverberation.
func TVRoom() Scene {
	return Scene{name: "tv", layers: []sceneLayer{
		{kind: layerMusic},
		{kind: layerBabble, voices: 1, gainDB: -2, lo: 300, hi: 3400, reverb: 250 * time.Millisecond},
	}}
}

// Scenes returns the library's scenes, in a fixed order.
func Scenes() []Scene {
	return []Scene{Cafe(), Street(), Office(), Car(), Airport(), Wind(), TVRoom()}
}

// Effect returns an Effect that adds the scene under the input at snrDB
// below the input's active level (the scene's level is its RMS over the
// chunk), like WhiteNoise. The same input and seed give the same output;
// silent input and the zero Scene come back unchanged.
func (s Scene) Effect(snrDB float64, seed uint64) Effect {
	return func(c Chunk) Chunk {
		level := ActiveRMS(c)
		if level == 0 || len(s.layers) == 0 || math.IsNaN(snrDB) || math.IsInf(snrDB, 1) {
			return c.Clone()
		}
		noise := make([]float64, len(c.Samples))
		newSceneGen(s, c.Rate, seed).fill(noise)
		return addScaled(c, noise, level, snrDB)
	}
}

// SceneStream plays a Scene continuously; see Scene.Stream. It is not
// safe for concurrent use.
type SceneStream struct {
	rate  int
	gain  float64
	gen   *sceneGen
	buf   []float64
	total int
}

// Stream returns a continuous playback of s at rate, whose steady layers
// together have an RMS level of levelDBFS (−35 is a noticeable cafe
// under speech at −20; events rise above it). Read renders it piece by
// piece: consecutive reads continue one another seamlessly, and the
// pieces of one stream are the same however it is cut. The same seed
// gives the same stream. The zero Scene, or a rate ≤ 0, streams silence.
func (s Scene) Stream(rate int, levelDBFS float64, seed uint64) *SceneStream {
	st := &SceneStream{rate: rate}
	if rate <= 0 || len(s.layers) == 0 || math.IsNaN(levelDBFS) || math.IsInf(levelDBFS, 0) {
		return st
	}
	st.gen = newSceneGen(s, rate, seed)
	st.gain = FullScale * math.Pow(10, levelDBFS/20) / st.gen.steady
	return st
}

// Rate returns the stream's sample rate.
func (st *SceneStream) Rate() int { return st.rate }

// Position returns how much of the stream has been read.
func (st *SceneStream) Position() time.Duration { return DurationOf(st.total, st.rate) }

// Read returns the stream's next n samples (none for n ≤ 0).
func (st *SceneStream) Read(n int) Chunk {
	out := Chunk{Rate: st.rate, Samples: make([]int16, max(n, 0))}
	if n <= 0 {
		return out
	}
	st.total += n
	if st.gen == nil {
		return out
	}
	if cap(st.buf) < n {
		st.buf = make([]float64, n)
	}
	b := st.buf[:n]
	clear(b)
	st.gen.fill(b)
	for i, v := range b {
		out.Samples[i] = roundClamp(st.gain * v)
	}
	return out
}

// Mix returns c with the stream's next len(c) samples added (saturating);
// c must be at the stream's rate, else it comes back as a copy.
func (st *SceneStream) Mix(c Chunk) Chunk {
	out := c.Clone()
	if c.Rate != st.rate {
		return out
	}
	bed := st.Read(len(c.Samples))
	MixInto(out.Samples, bed.Samples, 1)
	return out
}

// sceneCalibration is how much of each steady layer is rendered to
// measure its level when a generator is built.
const sceneCalibration = 4 * time.Second

// scenePreRoll is how much of a scene is rendered and dropped before it
// starts, so that it starts in its steady state.
const scenePreRoll = time.Second

// sceneGen renders a scene's layers, each scaled to its level.
type sceneGen struct {
	layers []layerGen
	gains  []float64
	// steady is the RMS of the steady layers together, for Stream's
	// absolute level.
	steady float64
}

type layerGen interface {
	// fill adds the layer's next len(dst) samples to dst.
	fill(dst []float64)
}

// newSceneGen builds the generator of s at rate from seed: each layer gets
// its own random source, and each steady layer is measured over its first
// sceneCalibration so that its RMS is its gain. The samples measured are
// kept and played first (a replayGen), not rendered a second time.
func newSceneGen(s Scene, rate int, seed uint64) *sceneGen {
	g := &sceneGen{}
	var power float64
	for i, l := range s.layers {
		rng := rand.New(rand.NewPCG(seed, rngStream^uint64(i+1)*0x9E3779B97F4A7C15))
		var layer layerGen = newLayerGen(l, s.talkers, rate, rng)
		gain := math.Pow(10, l.gainDB/20)
		if l.kind != layerEvents {
			probe := make([]float64, SamplesFor(rate, sceneCalibration))
			layer.fill(probe)
			r := math.Sqrt(meanSquareFloat(probe))
			if r > 0 {
				gain /= r
			}
			power += math.Pow(10, l.gainDB/10)
			layer = &replayGen{head: probe, src: layer}
		}
		g.layers = append(g.layers, layer)
		g.gains = append(g.gains, gain)
	}
	g.steady = math.Sqrt(power)
	if g.steady == 0 {
		g.steady = 1
	}
	// Start in the middle of things: talkers mid-phrase, the rooms'
	// reverberation built up, as a scene is when a call begins.
	g.fill(make([]float64, SamplesFor(rate, scenePreRoll)))
	return g
}

// replayGen plays a layer's first samples, rendered already, and then
// the layer itself, which continues where they end. A layer gives the same
// samples however its reads are cut, so this is the layer read afresh.
type replayGen struct {
	head []float64
	src  layerGen
}

func (g *replayGen) fill(dst []float64) {
	k := min(len(dst), len(g.head))
	for i, v := range g.head[:k] {
		dst[i] += v
	}
	g.head = g.head[k:]
	if len(g.head) == 0 {
		g.head = nil // let the rendered samples go
	}
	if k < len(dst) {
		g.src.fill(dst[k:])
	}
}

func meanSquareFloat(x []float64) float64 {
	if len(x) == 0 {
		return 0
	}
	var s float64
	for _, v := range x {
		s += v * v
	}
	return s / float64(len(x))
}

// fill adds the scene's next len(dst) samples to dst.
func (g *sceneGen) fill(dst []float64) {
	tmp := make([]float64, len(dst))
	for i, l := range g.layers {
		clear(tmp)
		l.fill(tmp)
		for j, v := range tmp {
			dst[j] += g.gains[i] * v
		}
	}
}

// derive returns a new random source seeded from rng, so that each part
// of a layer draws from its own source: the parts then give the same
// samples however the stream is cut into reads.
func derive(rng *rand.Rand) *rand.Rand { return rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())) }

func newLayerGen(l sceneLayer, talkers []Chunk, rate int, rng *rand.Rand) layerGen {
	var g layerGen
	switch l.kind {
	case layerNoise:
		g = newNoiseGen(l.color, rate, derive(rng))
	case layerBabble:
		g = newBabbleGen(l.voices, talkers, rate, derive(rng))
	case layerEvents:
		return &eventGen{kind: l.event, rate: rate, rng: rng, meanGap: float64(rate) * 60 / max(l.perMin, 1e-6)}
	case layerMusic:
		return newMusicGen(rate, rng)
	case layerEngine:
		return &engineGen{rate: rate, rng: rng, rpm: 1}
	}
	var secs []biquad
	if l.lo > 0 {
		secs = append(secs, highPass(4, l.lo, rate)...)
	}
	if l.hi > 0 {
		secs = append(secs, lowPass(4, l.hi, rate)...)
	}
	if len(secs) > 0 {
		g = &filteredGen{src: g, secs: secs, state: make([]biquadState, len(secs))}
	}
	if l.reverb > 0 {
		g = newSchroeder(g, rate, l.reverb)
	}
	if l.swell > 0 {
		g = &swellGen{src: g, rate: rate, rng: derive(rng), per: l.swell, depth: l.depth}
	}
	return g
}

// noiseGen streams white, pink or brown noise.
type noiseGen struct {
	color noiseColor
	rng   *rand.Rand
	pink  []struct{ a, b, x1, y1 float64 }
	brown float64
	ba    float64
}

func newNoiseGen(color noiseColor, rate int, rng *rand.Rand) *noiseGen {
	g := &noiseGen{color: color, rng: rng, ba: math.Exp(-2 * math.Pi * 10 / float64(rate))}
	for p := 10.0; p < float64(rate)/2; p *= 4 {
		g.pink = append(g.pink, struct{ a, b, x1, y1 float64 }{
			a: math.Exp(-2 * math.Pi * p / float64(rate)),
			b: math.Exp(-2 * math.Pi * 2 * p / float64(rate)),
		})
	}
	return g
}

func (g *noiseGen) fill(dst []float64) {
	for i := range dst {
		v := g.rng.NormFloat64()
		switch g.color {
		case colorPink:
			for k := range g.pink {
				s := &g.pink[k]
				y := v - s.b*s.x1 + s.a*s.y1
				s.x1, s.y1 = v, y
				v = y
			}
		case colorBrown:
			g.brown = g.ba*g.brown + v
			v = g.brown
		}
		dst[i] += v
	}
}

// filteredGen runs a layer through biquad sections.
type filteredGen struct {
	src   layerGen
	secs  []biquad
	state []biquadState
	tmp   []float64
}

func (g *filteredGen) fill(dst []float64) {
	if cap(g.tmp) < len(dst) {
		g.tmp = make([]float64, len(dst))
	}
	tmp := g.tmp[:len(dst)]
	clear(tmp)
	g.src.fill(tmp)
	for i, v := range tmp {
		for k := range g.secs {
			v = g.secs[k].step(&g.state[k], v)
		}
		dst[i] += v
	}
}

// swellGen varies a layer's level slowly: a smooth random walk in dB,
// with a new target level every 1/per seconds, cosine-interpolated.
type swellGen struct {
	src        layerGen
	rate       int
	rng        *rand.Rand
	per, depth float64
	from, to   float64
	pos, span  int
	tmp        []float64
}

func (g *swellGen) fill(dst []float64) {
	if cap(g.tmp) < len(dst) {
		g.tmp = make([]float64, len(dst))
	}
	tmp := g.tmp[:len(dst)]
	clear(tmp)
	g.src.fill(tmp)
	for i, v := range tmp {
		if g.pos >= g.span {
			g.from, g.to = g.to, (g.rng.Float64()-0.5)*g.depth
			g.span = max(int(float64(g.rate)/g.per*(0.5+g.rng.Float64())), 1)
			g.pos = 0
		}
		x := 0.5 - 0.5*math.Cos(math.Pi*float64(g.pos)/float64(g.span))
		db := g.from + (g.to-g.from)*x
		g.pos++
		dst[i] += v * math.Pow(10, db/20)
	}
}

// babbleGen streams several talkers at once: synthetic ones, or excerpts
// of recorded talkers.
type babbleGen struct {
	synth []*talkerGen
	rec   []*excerptGen
}

func newBabbleGen(voices int, talkers []Chunk, rate int, rng *rand.Rand) *babbleGen {
	g := &babbleGen{}
	for range max(voices, 1) {
		if len(talkers) > 0 {
			g.rec = append(g.rec, &excerptGen{talkers: talkers, rate: rate, rng: derive(rng), first: true, rs: map[int]*Resampler{}})
		} else {
			g.synth = append(g.synth, newTalker(rate, derive(rng)))
		}
	}
	return g
}

func (g *babbleGen) fill(dst []float64) {
	for _, t := range g.synth {
		t.fill(dst)
	}
	for _, e := range g.rec {
		e.fill(dst)
	}
}

// excerptGen plays random excerpts of recorded talkers back to back, as
// Babble does, cross-faded at the joins.
type excerptGen struct {
	talkers []Chunk
	rate    int
	rng     *rand.Rand
	rs      map[int]*Resampler
	cur     []int16
	pos     int
	first   bool
}

func (e *excerptGen) fill(dst []float64) {
	fade := max(SamplesFor(e.rate, babbleFade), 1)
	for i := range dst {
		if e.pos >= len(e.cur) {
			lo, hi := SamplesFor(e.rate, babbleMinExcerpt), SamplesFor(e.rate, babbleMaxExcerpt)
			want := lo + e.rng.IntN(hi-lo+1)
			t := e.talkers[e.rng.IntN(len(e.talkers))]
			e.cur = excerpt(e.rng, t, e.rate, want, e.rs, nil)
			e.pos = 0
			if e.first && len(e.cur) > 1 {
				e.pos = e.rng.IntN(len(e.cur))
			}
			e.first = false
			if len(e.cur) == 0 {
				e.cur = make([]int16, want) // a talker that cannot be used: a pause
			}
		}
		w := 1.0
		if e.pos < fade {
			w = float64(e.pos) / float64(fade)
		}
		if d := len(e.cur) - 1 - e.pos; d < fade {
			w = min(w, float64(d)/float64(fade))
		}
		dst[i] += w * float64(e.cur[e.pos])
		e.pos++
	}
}

// schroeder is a streaming Schroeder reverberator (four parallel comb
// filters into two all-passes) over a layer, mixed half dry, half wet.
type schroeder struct {
	src   layerGen
	combs []delayLine
	gains []float64
	aps   []delayLine
	tmp   []float64
}

type delayLine struct {
	buf []float64
	i   int
}

func (d *delayLine) read() float64   { return d.buf[d.i] }
func (d *delayLine) write(v float64) { d.buf[d.i] = v; d.i = (d.i + 1) % len(d.buf) }

func newSchroeder(src layerGen, rate int, rt60 time.Duration) *schroeder {
	s := &schroeder{src: src}
	for _, ms := range []float64{29.7, 37.1, 41.1, 43.7} {
		n := max(int(ms*float64(rate)/1000), 1)
		s.combs = append(s.combs, delayLine{buf: make([]float64, n)})
		// The loop gain that decays 60 dB over rt60.
		s.gains = append(s.gains, math.Pow(10, -3*ms/1000/rt60.Seconds()))
	}
	for _, ms := range []float64{5, 1.7} {
		s.aps = append(s.aps, delayLine{buf: make([]float64, max(int(ms*float64(rate)/1000), 1))})
	}
	return s
}

func (s *schroeder) fill(dst []float64) {
	if cap(s.tmp) < len(dst) {
		s.tmp = make([]float64, len(dst))
	}
	tmp := s.tmp[:len(dst)]
	clear(tmp)
	s.src.fill(tmp)
	for i, x := range tmp {
		var wet float64
		for k := range s.combs {
			y := s.combs[k].read()
			s.combs[k].write(x + s.gains[k]*y)
			wet += y
		}
		wet /= 4
		for k := range s.aps {
			d := s.aps[k].read()
			y := -0.7*wet + d
			s.aps[k].write(wet + 0.7*y)
			wet = y
		}
		dst[i] += 0.6*x + 0.8*wet
	}
}

// eventGen schedules short sounds at random (a Poisson process) and
// plays them, overlapping when they come close together.
type eventGen struct {
	kind    eventKind
	rate    int
	rng     *rand.Rand
	meanGap float64 // samples
	until   int     // samples to the next event
	started bool
	active  []playing
}

type playing struct {
	s   []float64
	pos int
}

func (g *eventGen) fill(dst []float64) {
	if !g.started {
		g.started = true
		g.until = int(g.rng.ExpFloat64() * g.meanGap)
	}
	for i := range dst {
		for g.until <= 0 {
			g.active = append(g.active, playing{s: g.sound()})
			g.until += max(int(g.rng.ExpFloat64()*g.meanGap), 1)
		}
		g.until--
		var v float64
		keep := g.active[:0]
		for _, p := range g.active {
			v += p.s[p.pos]
			p.pos++
			if p.pos < len(p.s) {
				keep = append(keep, p)
			}
		}
		g.active = keep
		dst[i] += v
	}
}

// sound renders one event, with a peak envelope of about 1.
func (g *eventGen) sound() []float64 {
	r, fs := g.rng, float64(g.rate)
	n := func(d time.Duration) int { return max(SamplesFor(g.rate, d), 1) }
	switch g.kind {
	case eventClink:
		// Three inharmonic partials between 2 and 6 kHz (bounded by the
		// Nyquist frequency), decaying in 20–60 ms.
		out := make([]float64, n(150*time.Millisecond))
		tau := (0.02 + 0.04*r.Float64()) * fs
		for range 3 {
			f := min(2000+4000*r.Float64(), 0.45*fs)
			ph := 2 * math.Pi * r.Float64()
			for i := range out {
				out[i] += math.Sin(2*math.Pi*f*float64(i)/fs+ph) * math.Exp(-float64(i)/tau) / 2
			}
		}
		return out
	case eventHorn:
		// Two square-ish tones a third apart, 0.3–0.8 s, 20 ms edges.
		out := make([]float64, n(time.Duration(300+r.IntN(500))*time.Millisecond))
		f1 := 380 + 80*r.Float64()
		edge := float64(n(20 * time.Millisecond))
		for i := range out {
			t := float64(i) / fs
			v := math.Tanh(3*math.Sin(2*math.Pi*f1*t)) + math.Tanh(3*math.Sin(2*math.Pi*f1*1.26*t))
			env := min(1, float64(i)/edge, float64(len(out)-i)/edge)
			out[i] = v * env / 2
		}
		return out
	case eventKeys:
		// A burst of 4–12 key clicks 80–200 ms apart, each 4 ms of
		// high-passed noise with a sharp decay.
		clicks := 4 + r.IntN(9)
		gaps := make([]int, clicks)
		total := 0
		for k := range gaps {
			gaps[k] = n(time.Duration(80+r.IntN(121)) * time.Millisecond)
			total += gaps[k]
		}
		out := make([]float64, total+n(10*time.Millisecond))
		hp := highPass(2, 1500, g.rate)
		pos := 0
		for _, gap := range gaps {
			click := make([]float64, n(4*time.Millisecond))
			for i := range click {
				click[i] = r.NormFloat64() * math.Exp(-float64(i)/(0.001*fs))
			}
			click = filterCascade(click, hp)
			amp := 0.6 + 0.4*r.Float64()
			for i, v := range click {
				out[pos+i] += amp * v
			}
			pos += gap
		}
		return out
	default: // eventChime
		// An announcement chime: three bell tones falling, 0.6 s each.
		notes := []float64{659.3, 523.3, 392.0}
		step := n(600 * time.Millisecond)
		out := make([]float64, 3*step+n(time.Second))
		for k, f := range notes {
			for i := 0; i < step+n(time.Second) && k*step+i < len(out); i++ {
				t := float64(i) / fs
				out[k*step+i] += (math.Sin(2*math.Pi*f*t) + 0.3*math.Sin(4*math.Pi*f*t)) * math.Exp(-t/0.5) / 1.3
			}
		}
		return out
	}
}

// musicGen streams a simple harmonic bed: a four-chord progression (I–V–
// vi–IV in C), two seconds a chord, each chord re-struck on every
// half-second beat with a decaying envelope, over a bass note and a kick
// drum on the beat.
type musicGen struct {
	rate  int
	rng   *rand.Rand
	n     int // samples rendered
	beat  int
	chord [][]float64
}

func newMusicGen(rate int, rng *rand.Rand) *musicGen {
	return &musicGen{rate: rate, rng: rng, beat: max(rate/2, 1), chord: [][]float64{
		{261.6, 329.6, 392.0, 130.8}, // C
		{196.0, 246.9, 293.7, 98.0},  // G
		{220.0, 261.6, 329.6, 110.0}, // Am
		{174.6, 220.0, 261.6, 87.3},  // F
	}}
}

func (g *musicGen) fill(dst []float64) {
	fs := float64(g.rate)
	for i := range dst {
		k := g.n
		g.n++
		chord := g.chord[(k/(4*g.beat))%len(g.chord)]
		since := float64(k%g.beat) / fs
		env := math.Exp(-since / 0.35)
		t := float64(k) / fs
		var v float64
		for j, f := range chord {
			amp := 0.25
			if j == len(chord)-1 {
				amp = 0.4 // bass
			}
			for h := 1; h <= 3; h++ {
				if f*float64(h) < fs/2 {
					v += amp / float64(h) * math.Sin(2*math.Pi*f*float64(h)*t)
				}
			}
		}
		// Kick: a 60→40 Hz thump in the first 120 ms of the beat.
		if since < 0.12 {
			v += 0.8 * math.Sin(2*math.Pi*(60-170*since)*since) * math.Exp(-since/0.04)
		}
		dst[i] += v * (0.3 + 0.7*env)
	}
}

// engineGen streams an engine's drone: harmonics of a firing frequency
// near 30 Hz, wandering slowly as the revs change.
type engineGen struct {
	rate  int
	rng   *rand.Rand
	phase float64
	rpm   float64 // relative revs, around 1
	drift float64
}

func (g *engineGen) fill(dst []float64) {
	fs := float64(g.rate)
	for i := range dst {
		if g.rng.IntN(max(g.rate/10, 1)) == 0 {
			g.drift = (g.rng.Float64() - 0.5) * 0.3
		}
		g.rpm += (1 + g.drift - g.rpm) / fs // a one-second lag
		f := 30 * g.rpm
		g.phase += f / fs
		g.phase -= math.Floor(g.phase)
		var v float64
		for h := 1; h <= 8; h++ {
			if f*float64(h) < fs/2 {
				v += math.Sin(2*math.Pi*float64(h)*g.phase+float64(h)) / float64(h)
			}
		}
		dst[i] += v
	}
}
