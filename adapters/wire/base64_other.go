//go:build !amd64 || purego

package wire

// base64Blocks encodes nothing here: AppendBase64's portable loop does
// all of it.
func base64Blocks(dst, src []byte) int { return 0 }
