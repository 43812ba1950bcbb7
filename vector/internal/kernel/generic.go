package kernel

// DotGeneric is the portable inner product. Eight independent accumulators
// let the compiler keep several multiply-adds in flight; a single running
// sum is bound by the latency of one add per element.
func DotGeneric(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		s0 += aa[0] * bb[0]
		s1 += aa[1] * bb[1]
		s2 += aa[2] * bb[2]
		s3 += aa[3] * bb[3]
		s4 += aa[4] * bb[4]
		s5 += aa[5] * bb[5]
		s6 += aa[6] * bb[6]
		s7 += aa[7] * bb[7]
	}
	for ; i < n; i++ {
		s0 += a[i] * b[i]
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// L2Generic is the portable squared Euclidean distance.
func L2Generic(a, b []float32) float32 {
	n := len(a)
	b = b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		aa := a[i : i+8 : i+8]
		bb := b[i : i+8 : i+8]
		d0 := aa[0] - bb[0]
		d1 := aa[1] - bb[1]
		d2 := aa[2] - bb[2]
		d3 := aa[3] - bb[3]
		d4 := aa[4] - bb[4]
		d5 := aa[5] - bb[5]
		d6 := aa[6] - bb[6]
		d7 := aa[7] - bb[7]
		s0 += d0 * d0
		s1 += d1 * d1
		s2 += d2 * d2
		s3 += d3 * d3
		s4 += d4 * d4
		s5 += d5 * d5
		s6 += d6 * d6
		s7 += d7 * d7
	}
	for ; i < n; i++ {
		d := a[i] - b[i]
		s0 += d * d
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// DotBatchGeneric applies DotGeneric to q and each row.
func DotBatchGeneric(q, rows, out []float32) {
	d := len(q)
	for i := range out {
		out[i] = DotGeneric(q, rows[i*d:(i+1)*d])
	}
}

// L2BatchGeneric applies L2Generic to q and each row.
func L2BatchGeneric(q, rows, out []float32) {
	d := len(q)
	for i := range out {
		out[i] = L2Generic(q, rows[i*d:(i+1)*d])
	}
}

// Dot4Generic applies DotGeneric to q and each of four rows.
func Dot4Generic(q, a, b, c, d []float32) [4]float32 {
	n := len(q)
	return [4]float32{DotGeneric(q, a[:n]), DotGeneric(q, b[:n]), DotGeneric(q, c[:n]), DotGeneric(q, d[:n])}
}

// L2x4Generic applies L2Generic to q and each of four rows.
func L2x4Generic(q, a, b, c, d []float32) [4]float32 {
	n := len(q)
	return [4]float32{L2Generic(q, a[:n]), L2Generic(q, b[:n]), L2Generic(q, c[:n]), L2Generic(q, d[:n])}
}
