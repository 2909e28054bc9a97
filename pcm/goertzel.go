package pcm

import "math"

// goertzelCoeff returns the Goertzel recurrence coefficient 2·cos(2πf/rate)
// for frequency f at rate. f need not fall on a DFT bin.
func goertzelCoeff(f float64, rate int) float64 {
	return 2 * math.Cos(2*math.Pi*f/float64(rate))
}

// goertzelPower returns |X(f)|², the squared magnitude of the discrete-time
// Fourier transform of x at the frequency whose coefficient is coeff (see
// goertzelCoeff). The result is the same as a DFT bin's power when f falls
// on a bin, and the DTFT's power between bins otherwise.
func goertzelPower(x []float64, coeff float64) float64 {
	var s1, s2 float64
	for _, v := range x {
		s1, s2 = v+coeff*s1-s2, s1
	}
	return s1*s1 + s2*s2 - coeff*s1*s2
}

// goertzelBank8 computes goertzelPower of x for eight coefficients in one
// pass over x and stores the results in out. Running the eight recurrences
// side by side reads x once and lets them overlap in the CPU.
func goertzelBank8(x []float64, coeff *[8]float64, out *[8]float64) {
	c0, c1, c2, c3 := coeff[0], coeff[1], coeff[2], coeff[3]
	c4, c5, c6, c7 := coeff[4], coeff[5], coeff[6], coeff[7]
	var a0, a1, a2, a3, a4, a5, a6, a7 float64 // s[n-1]
	var b0, b1, b2, b3, b4, b5, b6, b7 float64 // s[n-2]
	for _, v := range x {
		a0, b0 = v+c0*a0-b0, a0
		a1, b1 = v+c1*a1-b1, a1
		a2, b2 = v+c2*a2-b2, a2
		a3, b3 = v+c3*a3-b3, a3
		a4, b4 = v+c4*a4-b4, a4
		a5, b5 = v+c5*a5-b5, a5
		a6, b6 = v+c6*a6-b6, a6
		a7, b7 = v+c7*a7-b7, a7
	}
	out[0] = a0*a0 + b0*b0 - c0*a0*b0
	out[1] = a1*a1 + b1*b1 - c1*a1*b1
	out[2] = a2*a2 + b2*b2 - c2*a2*b2
	out[3] = a3*a3 + b3*b3 - c3*a3*b3
	out[4] = a4*a4 + b4*b4 - c4*a4*b4
	out[5] = a5*a5 + b5*b5 - c5*a5*b5
	out[6] = a6*a6 + b6*b6 - c6*a6*b6
	out[7] = a7*a7 + b7*b7 - c7*a7*b7
}
