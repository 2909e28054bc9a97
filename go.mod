module github.com/voicetest-go/voicetest

go 1.26

require (
	github.com/coder/websocket v1.8.15
	github.com/go-audio/audio v1.0.0 // indirect
	github.com/go-audio/riff v1.0.0 // indirect
	github.com/go-audio/wav v1.1.0 // indirect
)
