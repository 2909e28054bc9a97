//go:build !amd64 || purego

package pcm

// dot returns the inner product of h and x[:len(h)].
func dot(h, x []float32) float32 { return dotGo(h, x) }
