// Package binom holds the binomial tail sums the statistical tests use to
// set their failure thresholds exactly.
package binom

import "math"

// pmf returns P(Y = k) for Y ~ Binomial(n, q).
func pmf(n, k int, q float64) float64 {
	lg, _ := math.Lgamma(float64(n + 1))
	l1, _ := math.Lgamma(float64(k + 1))
	l2, _ := math.Lgamma(float64(n - k + 1))
	return math.Exp(lg - l1 - l2 + float64(k)*math.Log(q) + float64(n-k)*math.Log1p(-q))
}

// Tail returns P(Y >= y) for Y ~ Binomial(n, q), summed term by term.
func Tail(n, y int, q float64) float64 {
	s := 0.0
	for k := max(y, 0); k <= n; k++ {
		s += pmf(n, k, q)
	}
	return s
}

// Min returns the smallest k with P(Binomial(n, c) < k) < p: a coverage
// count below it fails a check at nominal coverage c with probability
// below p (and below that for any true coverage above c).
func Min(n int, c, p float64) int {
	cdf := 0.0
	for k := 0; k <= n; k++ {
		pk := pmf(n, k, c)
		if cdf+pk >= p {
			return k
		}
		cdf += pk
	}
	return n
}
