// Package speech implements voicetest's TTS and STT engines: OpenAI's audio
// endpoints through openai-go and the local flite, espeak-ng and pocketsphinx
// engines run as processes. Every call goes through the voicetest cache.
package speech
