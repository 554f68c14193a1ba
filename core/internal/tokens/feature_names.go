package tokens

// The features: their indices and names, in the order of the weight vectors.

// Feature indices. A text is reduced to a vector of counts of these
// features in one pass over its bytes; the token estimate is the dot product
// of that vector with a per-family weight vector fitted by internal/tokenfit.
//
// The features follow how byte-pair tokenizers pre-split text: letter runs
// (split at camelCase boundaries), digit runs, punctuation runs, whitespace
// runs, and script classes for non-ASCII text. Long random-looking runs of
// [A-Za-z0-9+/] (base64) and hexadecimal runs are counted per byte instead of
// as pieces, because tokenizers break them into short, nearly random tokens.
const (
	fWord1            = iota // letter pieces of 1–2 letters
	fWord2                   // letter pieces of 3–5 letters
	fWord3                   // letter pieces of 6–8 letters
	fWord4                   // letter pieces of 9–12 letters
	fWord5                   // letter pieces of 13+ letters
	fWordExtra               // letters beyond the 12th in long pieces
	fTitle                   // pieces of the form Upper+lower ("Title")
	fUpper                   // ALLCAPS pieces of 2+ letters
	fUpperLetters            // letters in ALLCAPS pieces
	fGlued                   // pieces that are not the first of their alphanumeric run
	fDigitWord               // letter pieces of 1–2 letters directly after a digit (counted instead of word1_2)
	fGluedTitle              // Title pieces inside a run (the humps of camelCase)
	fAccent                  // Latin letters outside ASCII (é, ñ, ß, ...)
	fAccentWord              // letter pieces containing such letters
	fDigitRun                // runs of ASCII digits
	fDigitGroup              // ceil(len/3) summed over digit runs
	fDigit                   // ASCII digits
	fPunct                   // ASCII punctuation bytes that differ from the byte before
	fPunctRepeat             // ASCII punctuation bytes equal to the byte before ("----")
	fPipe                    // '|' bytes (table borders; rarely merged with neighbours)
	fPunctRun                // runs of ASCII punctuation, except those counted by fPunctWord
	fPunctWord               // single punctuation bytes directly followed by a letter
	fSpaceDigit              // single spaces followed by a digit
	fSpaceRun                // runs of 2+ spaces
	fSpaceExtra              // spaces beyond the first in such runs
	fNewlineRun              // runs of \r and \n not directly after punctuation
	fNewlinePunct            // runs of \r and \n directly after ASCII punctuation
	fNewlineExtra            // newlines beyond the first in a run
	fTab                     // tab bytes
	fTabRun                  // runs of tabs
	fHan                     // CJK ideographs
	fHanRun                  // runs of CJK ideographs not directly after kana
	fHanRunKana              // runs of CJK ideographs directly after kana
	fHanHead                 // the first four ideographs of every run (short runs tokenize worse)
	fHanSolo                 // ideographs that do not complete a pair found in the Han pair table
	fKana                    // Hiragana and Katakana
	fHangul                  // Hangul syllables and jamo
	fCJKPunct                // CJK symbols and punctuation, full-width forms
	fOtherLetter             // letters of other scripts (Greek, Cyrillic, Arabic, Indic, ...)
	fOtherRun                // runs of such letters
	fUniPunct                // general punctuation U+2000–U+206F (quotes, dashes)
	fSymbol                  // any other non-ASCII rune (symbols and emoji outside the symbol tables)
	fBlob                    // bytes in base64-like runs
	fBlobRun                 // base64-like runs
	fHex                     // bytes in hexadecimal runs
	fHexRun                  // hexadecimal runs
	fCtrl                    // control bytes and invalid UTF-8
	fHanRare                 // ideographs of CJK Extension B and beyond (U+20000–U+3FFFF)
	fAstral                  // other runes outside the BMP that are not emoji (math alphanumerics, historic scripts)
	fPrivate                 // UTF-8 bytes of private-use runes (U+E000–U+F8FF, planes 15 and 16) and of plane 14
	fCombining               // byte tokens of combining marks (see markTokens)
	fBoxTokens               // box-drawing and block runs, costed per run with the o200k run table
	fPunctLong               // ASCII punctuation runs of one byte (longPunct+ long), their first token (see punct_long_more)
	fPunctAlt                // bytes of alternating two-byte punctuation patterns ("-=-=", "._._"), in long ones
	fCJKSplit                // ideographs and kana that are not a token alone (the split tables of hanpairs.go)
	fKanaSolo                // kana that do not complete a pair found in the kana pair table
	fElision                 // apostrophes of elisions ("l'homme", "qu'il"), not of English contractions
	fTabPunct                // runs of tabs followed by ASCII punctuation (the last tab cannot join a word)
	fSnake                   // single '_' between a letter or digit and a letter (snake_case), counted instead of punct and punct_word
	fSnakeUpper              // snake_case joints before an upper-case letter (counted by snake too)
	fVerbEnd                 // French verb endings ("ait", "aient", "èrent" ending a word; see verbEnds), in text dense with accented letters
	fContraction             // English contractions ("'s", "'t", "'re", ...) after a letter, counted instead of punct and a piece
	fAccentRare              // non-ASCII Latin letters other than é, è, à and É (rarer inside vocabulary words)
	fNewlineWord             // runs of \r and \n followed directly by a lower-case ASCII letter or a rune of U+00C0–U+00FF (hard-wrapped prose)
	fPunctPair               // pairs of adjacent ASCII punctuation bytes that are one o200k token, in runs of two or more (their bytes are not counted by punct)
	fLetterRun               // runs of one ASCII letter (longLetterRun+ long) at the start of a word, costed with the o200k run table
	fLetterRunG              // the same runs, costed with the Gemma-3 run table
	fCJKRepeat               // ideographs and kana equal to the rune before (runs of one character do not merge)
	fSymO200k                // symbols and emoji of the symbol tables, costed alone in o200k tokens
	fSymGemma                // the same, costed alone in Gemma-3 tokens
	fPunctMixed              // punct, in runs of four or more ASCII punctuation bytes (random punctuation, operator soup; rare in code)
	fPunctMixedPair          // punct_pair, in runs of four or more
	fPunctLongMore           // the tokens after the first of the runs of punct_long (the first merges with a space or newline around the run)
	fPunctLongMoreG          // the same with the Gemma-3 run table
	fBoxTokensG              // box_tokens with the Gemma-3 run table, and a token for a space before the run
	fPunctTriple             // triples of adjacent ASCII punctuation bytes that are one o200k token, in runs of two or three (their bytes are not counted by punct)
	fPunctMixedTriple        // punct_triple, in runs of four or more
	fOtherRepeat             // letters of other scripts equal to the rune before, counted instead of other_letter
	fCJKRepeatSplit          // cjk_repeat of runes in the split tables (o200k splits them alone)
	fCJKRepeatSplitG         // cjk_repeat, costed by what Gemma 3 adds to one alone (gemmaHanExtra, gemmaKanaExtra)
	fSpaceSymbol             // single spaces before a symbol or emoji of the symbol tables (Gemma 3 keeps the space apart)
	fKanaSoloG               // kana that do not complete a pair of the Gemma-3 kana pair table (kana_solo for Gemma 3)
	fKanaSolo2G              // kana_solo_g directly after a kana_solo_g: neither merged with a neighbour before it (random kana, particles)
	fWideSplit               // the tokens o200k adds to one for full-width forms U+FF01–U+FF5E alone (see wideSplit; the letters are two byte tokens)
	fLatinRepeat             // letters of U+00C0–U+017F equal to the letter before, costed alone in o200k tokens (see latinCost), counted instead of letters and accents
	fLatinRepeatG            // the same, costed alone in Gemma-3 tokens
	fSpaceSymbolG            // single spaces before a symbol or emoji of the symbol tables that Gemma 3 does not join to the space (see symSpaceGemma)
	fRareBigram              // letter pairs of words that real words seldom hold (see rareWordPairs), in text whose sample shows many or that mixes CJK and another script
	// NumFeatures is the length of a feature vector.
	NumFeatures
)

// FeatureNames names the features, in index order. They are the keys of the
// weights files.
var FeatureNames = [NumFeatures]string{
	"word1_2", "word3_5", "word6_8", "word9_12", "word13p", "word_extra",
	"title", "upper", "upper_letters", "glued", "digit_word", "glued_title", "accent", "accent_word",
	"digit_run", "digit_group3", "digit", "punct", "punct_repeat", "pipe", "punct_run", "punct_word",
	"space_digit", "space_run", "space_extra", "newline_run", "newline_punct", "newline_extra",
	"tab", "tab_run", "han", "han_run", "han_run_kana", "han_head", "han_solo", "kana", "hangul", "cjk_punct", "other_letter",
	"other_run", "uni_punct", "symbol", "blob", "blob_run", "hex", "hex_run", "ctrl",
	"han_rare", "astral", "private", "combining", "box_tokens", "punct_long", "punct_alt",
	"cjk_split", "kana_solo", "elision", "tab_punct", "snake", "snake_upper", "verb_end", "contraction", "accent_rare", "newline_word",
	"punct_pair", "letter_run", "letter_run_g", "cjk_repeat", "symbol_o200k", "symbol_gemma",
	"punct_mixed", "punct_mixed_pair", "punct_long_more", "punct_long_more_g", "box_tokens_g",
	"punct_triple", "punct_mixed_triple", "other_repeat", "cjk_repeat_split", "cjk_repeat_split_g", "space_symbol", "kana_solo_g",
	"kana_solo2_g", "wide_split", "latin_repeat", "latin_repeat_g", "space_symbol_g",
	"rare_bigram",
}

// FeatureIndex returns the index of the named feature, or -1.
func FeatureIndex(name string) int {
	for i, n := range FeatureNames {
		if n == name {
			return i
		}
	}
	return -1
}
