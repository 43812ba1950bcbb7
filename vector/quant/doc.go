// Package quant is scalar quantization of cairn's vectors: a
// [Quantizer] trained from the data maps each float32 vector to a code of
// one byte a dimension (or one bit: see 1-bit codes below), and a [Query]
// prepared once per search estimates the distance from the query to any
// code with integer dot products
// (vector/internal/kernel: AVX2 assembly, portable Go under the purego
// tag). An index scans or walks the codes, a quarter of the float32 bytes,
// and rescores its best candidates exactly from the [vector.Store].
//
// # The rule
//
// Training reads a sample of the store's (prepared) vectors and gives each
// dimension j a range [loⱼ, hiⱼ]: the Clip and 1−Clip quantiles of the
// sampled values, so that a few outliers do not stretch the range of every
// other value. Training then tries one range for all dimensions (the union
// of theirs) and keeps it instead if it ranks the sample better (see
// rankError in quantizer.go): per-dimension ranges code each dimension
// finely, but give wide dimensions large query weights, which the 7-bit
// rounding of the query treats coarsely. A component x is coded as cⱼ = round((x − loⱼ)/sⱼ), clamped
// to 0…255, with step sⱼ = (hiⱼ − loⱼ)/255, and stands for
// x̂ⱼ = loⱼ + sⱼ·cⱼ. A query q is prepared once: its weights wⱼ = qⱼ·sⱼ are
// rounded to integers in [−64, 64] (qiⱼ = round(wⱼ/α), α = max|wⱼ|/64: the
// range the kernels accept), so that
//
//	q·x̂ = Σ qⱼ·loⱼ + Σ wⱼ·cⱼ ≈ base + α·Σ qiⱼ·cⱼ
//
// where the last sum is exact in int32. From that estimate of q·x:
//
//	Cosine   1 − q·x̂            (q and x unit length, as the store keeps them)
//	Dot      −q·x̂
//	L2       ‖q‖² − 2·q·x̂ + ‖x‖² (‖x‖², exact, is kept in the code)
//
// These are estimates of the metric's own distance, so they rank like it;
// an index returns exact distances by rescoring from the store.
// [Query.ErrorBound] bounds an estimate's error strictly (for vectors
// within the ranges), and [Query.NoiseSD] gives the typical size of the
// part the codes' rounding makes.
//
// A code is [Quantizer.CodeSize] bytes: Dim code bytes, then ‖x‖² as a
// little-endian float32 (1 under Cosine).
//
// # 1-bit codes
//
// Trained with [TrainOptions].Bits = 1, a quantizer keeps the sample's
// mean μ instead of ranges, and a code is a sign a dimension: bit j of x's
// code is set where xⱼ > μⱼ (in 64-bit words, then a 12-byte trailer:
// the scale ‖x−μ‖²/‖x−μ‖₁, the exact term ‖x−μ‖² under L2 or ⟨x−μ, μ⟩
// otherwise, and the count of set bits). A query, less μ too, is rounded
// to 16 levels held as four bit planes, so that scoring a code is four
// AND and popcount pairs a word (AVX-512's vector popcount where the CPU
// has it). With s the signs, ⟨x−μ, q−μ⟩ is estimated as the scale times
// ⟨s, q−μ⟩ (RaBitQ's estimator, without its random rotation), and the
// distance follows as above. The estimates are far coarser than int8
// ones, and have no strict bound ([Query.ErrorBound] is +Inf): they serve
// to choose what to score exactly.
//
// # Truncated codes
//
// [TrainOptions].Dims codes only each vector's first Dims components
// (renormalised under Cosine), for Matryoshka embeddings, whose prefixes
// rank nearly as the whole vectors do. Everything above then holds of the
// prefixes; vectors and queries are still taken and checked whole, and
// ErrorBound is +Inf, since nothing bounds a prefix's distance against the
// whole vectors'.
//
// # Bad input
//
// Quantization refuses exactly what the float path refuses: [Quantizer.Encode]
// and [Quantizer.Prepare] check vectors with [vector.Check] (the wrong
// length gives [vector.ErrDimensionMismatch], NaN or ±Inf
// [vector.ErrNonFinite], and so on). A quantizer read back with
// [Quantizer.UnmarshalBinary] is checked against its store with
// [Quantizer.Check]; damaged bytes give [vector.ErrCorrupt], a newer
// format [vector.ErrUnsupportedVersion].
//
// # Staleness
//
// A quantizer never changes. Codes go stale in two ways, which
// [Quantizer.Stale] detects from counts the index keeps: the data grew well
// past the sample the ranges came from, or the data drifted, which shows as
// a rate of clipped components (values outside their range, counted by
// Encode) well above the rate training left outside by design. The cure is
// to train again and re-encode every vector.
//
// # Concurrency
//
// A [Quantizer] is immutable and safe for concurrent use. A [Query] is
// read-only after Prepare: any number of goroutines may compute distances
// with it at once.
package quant
