package tokens

// Punctuation: the longer runs of ASCII punctuation bytes, with the o200k
// run table and the alternation count.

// punctRun counts the run of ASCII punctuation at s[i], of four bytes or
// more, and returns its end. Single bytes and runs of two or three
// ("\":", "),", "();") are counted inline by countFeatures: they are most
// of the punctuation of code and JSON, and a call costs them 5%.
func punctRun[T text](s T, i int, f *Features) int {
	n := len(s)
	c := s[i]
	j := i + 1
	rep := int32(0)
	pipes := int32(0)
	if c == '|' {
		pipes++
	}
	// same counts the bytes equal to the one before in the
	// current run of one byte; long runs are costed by the table.
	same, long, alt := int32(0), int32(0), int32(0)
	for j < n && byteKind[s[j]] == kPunct {
		if d := s[j]; d == s[j-1] {
			// The byte and the rest of its run ("-----"), eight
			// at a time: each repeats the byte before.
			e := j + 1
			for e+8 <= n && load64(s, e) == uint64(d)*lsb {
				e += 8
			}
			rep += int32(e - j)
			same += int32(e - j)
			if d == '|' {
				pipes += int32(e - j)
			}
			j = e
			continue
		}
		if j-i >= 2 && s[j] == s[j-2] {
			alt++
		}
		if same >= longPunct-1 {
			rep -= same
			long += same + 1
			f[fPunctLong] += runTokens(same+1, int32(punctRunLen[s[j-1]]))
		}
		same = 0
		if s[j] == '|' {
			pipes++
		}
		j++
	}
	if same >= longPunct-1 {
		rep -= same
		long += same + 1
		f[fPunctLong] += runTokens(same+1, int32(punctRunLen[s[j-1]]))
	}
	if alt < longAlt {
		alt = 0
	}
	f[fPunctAlt] += alt
	f[fPipe] += pipes
	f[fPunct] += int32(j-i) - rep - long - alt
	f[fPunctRepeat] += rep
	f[fPunctRun]++ // never one byte before a word: those take the fast path
	return j
}

// shortPunctRun returns the length of the run of ASCII punctuation that
// starts at s[i], followed by more punctuation, if it is two or three bytes
// long, and 0 otherwise.
func shortPunctRun[T text](s T, i int) int {
	switch n := len(s); {
	case i+2 >= n || byteKind[s[i+2]] != kPunct:
		return 2
	case i+3 >= n || byteKind[s[i+3]] != kPunct:
		return 3
	}
	return 0
}
