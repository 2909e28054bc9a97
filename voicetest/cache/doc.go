// Package cache is voicetest's record/replay store for LLM, TTS and STT
// answers.
//
// Every answer is stored on disk under the calling test package's
// testdata/voicetest/cache/ directory, keyed by a SHA-256 over a canonical
// encoding of exactly the inputs that determine it, so a committed cache
// replays a whole suite offline, byte for byte, with no API key.
//
// # Keys
//
// A [Key] holds the kind of call ("tts", "stt", "llm", "judge", …), the
// provider, the model and the fields that determine the answer. Its
// [Key.Digest] is the hex SHA-256 of a canonical JSON encoding: object keys
// sorted, numbers normalised (1.0 is 1; 0.7 stays 0.7), no HTML escaping, no
// white space. Audio enters a key by content hash ([AudioDigest]). Secrets,
// request ids, timestamps and user agents must never enter a key: a field
// named like a credential is rejected.
//
// # Files
//
// Each answer is two files under <dir>/<kind>/: an entry <digest>.json,
// small and readable in review (format, key, kind, provider, model, the
// key's fields with long values shown as a digest and a preview, the created
// time, response metadata, and the body file's name, size and SHA-256), and
// a body file <digest>.<hash>.<ext> holding the answer: .txt for text, .json
// for JSON values and JSON responses, .wav for audio (canonical 16-bit mono
// PCM), .sse for event streams, .bin for other bytes. A truncated or
// corrupt entry or body is a [*CorruptError] naming the file and the command
// that re-records it; the cache never answers from it.
//
// Writes go to a temporary file that is synced and renamed into place, and
// the directory is synced after the rename, so concurrent tests
// (t.Parallel) and several test processes can record the same entries;
// the last writer wins, readers never see partial files, and a recorded
// entry survives a crash or power loss once its call returns. The body is
// in place before the entry that names it. Within one [Cache], concurrent
// calls for one key produce it once.
//
// A writer killed mid-write (SIGKILL, a go test -timeout panic, power
// loss) leaves a hidden temporary file, .<name>.tmp-<digits>, next to the
// entries. The cache never reads one as an entry (the key's entry is
// simply still missing, or still the previous one), and voicetest-update
// removes those older than ten minutes.
//
// # Modes
//
// A [Mode] says what happens on each call:
//
//   - replay: answer from the store only; a miss is a [*MissError] naming the
//     test, provider, request and the command that records it, e.g.
//     go test ./voicetest/speech -run '^TestGreeting$' -voicetest.record
//   - record: answer from the store; on a miss call the producer and store
//     its answer.
//   - refresh: call the producer (once per key per Cache) and overwrite the
//     stored answer; an unchanged answer leaves its files untouched.
//   - off: call the producer, read and write nothing.
//
// The mode comes from, in order: the test flags -voicetest.cache=MODE or
// -voicetest.record (registered only in test binaries, when
// testing.Testing() is true); the environment variables VOICETEST_CACHE=MODE
// or VOICETEST_RECORD=1; and otherwise record, or replay when CI is set.
// So "go test ./..." replays in CI and fails on a missing entry, and records
// what is missing on a developer's machine.
//
// # Use
//
// [ForTest] opens the cache of the running test. Producers that are not HTTP
// (local engines run as processes) go through [Cache.Text], [DoJSON] and
// [Cache.Audio]:
//
//	c := cache.ForTest(t)
//	key := cache.Key{Kind: "tts", Provider: "flite", Model: "slt",
//		Fields: map[string]any{"text": text, "rate": 16000}}
//	audio, err := c.Audio(t.Context(), key, func(ctx context.Context) (cache.Audio, error) {
//		return runFlite(ctx, text) // runs only on a miss in record mode
//	})
//
// HTTP providers use [Cache.Transport] or [Cache.Client], which key each
// request by method, path, query, relevant headers and canonical body
// (multipart file parts by hash), scrub credentials, and replay the
// response body byte for byte, including event streams:
//
//	client := openai.NewClient(option.WithHTTPClient(c.Client(cache.WithProvider("openai"))))
//
// # Pruning
//
// When VOICETEST_CACHE_USAGE names a directory, every process writes the
// entries it used (hits and new records) to a usage-<pid>.txt file there.
// cmd/voicetest-update sets it, runs the tests, and removes the entries
// that no test used.
package cache
