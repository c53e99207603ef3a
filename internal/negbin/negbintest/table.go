// Package negbintest holds the published quantile table of the
// negative-binomial interval (reference 1 of the README: the .NET
// randomized allocation sampling design, p = 1/102400), for the tests of
// the packages that compute it.
package negbintest

// Row is one row of the table: for S sample events, the failed trials at
// CDF = 0.025 (Lo) and CDF = 0.975 (Hi), each the largest k with
// CDF(k) < target.
type Row struct{ S, Lo, Hi int64 }

// Table is the reference's table, p = 1/102400.
var Table = []Row{
	{1, 2591, 377738},
	{2, 24800, 570531},
	{3, 63349, 739802},
	{4, 111599, 897761},
	{5, 166241, 1048730},
	{6, 225469, 1194827},
	{7, 288185, 1337279},
	{8, 353666, 1476870},
	{9, 421407, 1614137},
	{10, 491039, 1749469},
	{20, 1250954, 3038270},
	{30, 2072639, 4264804},
	{40, 2926207, 5459335},
	{50, 3800118, 6633475},
	{100, 8331581, 12342053},
	{200, 17739679, 23413825},
	{300, 27341465, 34291862},
	{400, 37043463, 45069676},
	{500, 46809487, 55783459},
	{1000, 96149867, 108842093},
	{2000, 195919830, 213870137},
	{3000, 296301551, 318286418},
	{4000, 396999923, 422386047},
	{5000, 497900649, 526283322},
	{10000, 1004017229, 1044156743},
}
