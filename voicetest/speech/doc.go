// Package speech implements voicetest's TTS and STT engines: OpenAI's audio
// endpoints, called over HTTP by the engines themselves (no SDK is linked;
// the retries and errors are openai-go's, which the package's tests use as
// their oracle), and the local flite, espeak-ng and pocketsphinx engines
// run as processes. Every call goes through the voicetest cache.
//
// # Engines
//
//	name              engine                                   needs
//	flite[/voice]     FliteTTS, voices slt (default), kal, …   Debian package flite
//	espeak[/voice]    EspeakTTS, voice en-us (default), …      Debian package espeak-ng
//	openai[/voice]    OpenAITTS, 24 kHz PCM, voice nova         OPENAI_API_KEY or OPENAI_BASE_URL
//	pocketsphinx      PocketsphinxSTT, 16 kHz, en-us            Debian packages pocketsphinx, pocketsphinx-en-us
//	openai[/model]    OpenAISTT, WAV upload                      OPENAI_API_KEY or OPENAI_BASE_URL
//
// TTSByName and STTByName pick an engine by such a name; DefaultTTS and
// DefaultSTT pick one from VOICETEST_TTS / VOICETEST_STT, else the local
// engines when installed, else OpenAI when a key or base URL is set. The
// OpenAI engines work with any OpenAI-compatible server (vLLM, LM Studio, a
// local TTS server) through OPENAI_BASE_URL or WithBaseURL; the models come
// from VOICETEST_TTS_MODEL and VOICETEST_STT_MODEL or WithModel.
//
// A local engine that is not installed fails with a *NotInstalledError
// (errors.Is ErrNotInstalled) naming the Debian package to install; tests
// call SkipIfNotInstalled to skip with that message. pocketsphinx widens
// telephone audio below 16 kHz (Widen; StrictWideband refuses it with
// ErrNarrowband), and takes TranscriptionRequest.Phrases, or WithPhrases,
// as a JSGF grammar of expected phrases: with them it transcribes 8 kHz
// phone calls. Narrowband adapts any other wideband engine.
//
// # Cache
//
// Give every engine a cache with WithCache (cache.ForTest(t) in a test).
// Each call is then answered from the cache when it holds the answer, and
// the engine runs only on a miss in record mode. Programs and keys are
// looked up only then, so a committed cache replays with no engine
// installed and no key, and the OpenAI client makes no retries in replay.
//
// Keys hold what determines the answer and nothing else:
//
//   - TTS: kind "tts", provider ("flite", "espeak", "openai"), model (the
//     flite or espeak voice; the OpenAI model), fields text and speed, plus
//     voice, instructions and format for OpenAI. The requested output rate
//     is not in the key: audio is stored at the engine's native rate and
//     resampled after the cache, so one entry serves every rate.
//   - STT: kind "stt", provider, model, fields audio (cache.AudioDigest of
//     the input at its own rate) and phrases (pocketsphinx) or language and
//     prompt (OpenAI).
//
// Engine versions are deliberately not in the keys: a key must be
// computable on a machine that has no engine (that is what replay is for),
// and asking the engine its version would need it. STT entries record the
// engine in their stored answer; a new engine version is picked up by
// re-recording (-voicetest.cache=refresh), whose diff shows what changed.
//
// Effects applied to the audio after synthesis (noise, telephone band)
// never enter a key.
package speech
