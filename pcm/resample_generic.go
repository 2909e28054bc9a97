//go:build !amd64 || purego

package pcm

// dot returns the inner product of h and x[:len(h)].
func dot(h, x []float32) float32 { return dotGo(h, x) }

// polyBatch sets out[j] to the inner product of coef[cOff[j]:][:k] and
// x[xOff[j]:][:k] for every j.
func polyBatch(out, coef, x []float32, cOff, xOff []int32, k int) {
	for j := range out {
		c, o := int(cOff[j]), int(xOff[j])
		out[j] = dotGo(coef[c:c+k], x[o:o+k])
	}
}
