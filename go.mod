module github.com/voicetest-go/voicetest

go 1.26
