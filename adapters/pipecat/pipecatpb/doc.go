// Package pipecatpb holds the Go types of Pipecat's protobuf frames, the
// wire format of Pipecat's ProtobufFrameSerializer (the serializer of its
// WebSocket transports and of pipecat-client-js's WebSocket transport).
//
// frames.proto is Pipecat's own definition, copied verbatim from
// github.com/pipecat-ai/pipecat, src/pipecat/frames/frames.proto (commit
// aa510c9a53dd44bc05bee924ec96de04f00dc5ba; package "pipecat": TextFrame,
// AudioRawFrame, TranscriptionFrame, MessageFrame, InterruptionFrame and
// the Frame oneof). frames.pb.go is generated from it by protoc (3.21.12,
// Debian's protobuf-compiler) and protoc-gen-go v1.36.12 with the go
// generate line below; the Go package is given on the command line, so
// that the .proto stays as Pipecat ships it. Do not edit frames.pb.go:
// install both tools and run go generate.
package pipecatpb

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go_opt=Mframes.proto=github.com/voicetest-go/voicetest/adapters/pipecat/pipecatpb frames.proto
