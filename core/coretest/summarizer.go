package coretest

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"google.golang.org/genai"
)

// The test summarizer: summaries that keep the markers of their input, and
// injected faults (an error, an empty answer, a panic, a summarizer that
// blocks until released).

type faultKind int

const (
	faultNone faultKind = iota
	faultError
	faultEmpty
	faultHuge
	faultSlow
	faultHang
	faultPanic
)

// Fault is a failure a [Summarizer] can be told to inject.
type Fault struct {
	kind faultKind
}

// Faults a [Summarizer] can inject.
var (
	// FaultNone behaves normally.
	FaultNone = Fault{}
	// FaultError returns [ErrSummarizerFault].
	FaultError = Fault{kind: faultError}
	// FaultEmpty returns a response with no text.
	FaultEmpty = Fault{kind: faultEmpty}
	// FaultHuge returns a summary of [HugeSummarySize] characters.
	FaultHuge = Fault{kind: faultHuge}
	// FaultPanic panics inside the call ([Summarizer.Summarize]).
	FaultPanic = Fault{kind: faultPanic}
	// FaultSlow is a summarizer slower than any timeout: the call blocks
	// until its context ends, and returns the context's error, or until
	// [Summarizer.Release], and answers normally. It calls
	// [SummarizerConfig.OnBlocked] first.
	FaultSlow = Fault{kind: faultSlow}
	// FaultHang is a summarizer that ignores its context: the call blocks
	// until [Summarizer.Release], then answers normally. It calls
	// [SummarizerConfig.OnBlocked] first. A test that injects it releases
	// the summarizer at its end and waits for the call ([Summarizer.Wait]),
	// so that no goroutine is left behind.
	FaultHang = Fault{kind: faultHang}
)

// String names the fault.
func (f Fault) String() string {
	switch f.kind {
	case faultError:
		return "error"
	case faultEmpty:
		return "empty"
	case faultHuge:
		return "huge"
	case faultSlow:
		return "slow"
	case faultHang:
		return "hang"
	case faultPanic:
		return "panic"
	}
	return "none"
}

// ErrSummarizerFault is the error [FaultError] returns.
var ErrSummarizerFault = errors.New("contextguardtest: injected summarizer failure")

// HugeSummarySize is the size of the summary [FaultHuge] returns.
const HugeSummarySize = 200_000

// DefaultSummarySize is the default size of a [Summarizer]'s summaries.
const DefaultSummarySize = 1500

// SummarizerConfig configures a [Summarizer].
type SummarizerConfig struct {
	// Name is the model name (default "scripted-summarizer").
	Name string
	// SummarySize is the size of the summaries in bytes (default
	// [DefaultSummarySize]).
	SummarySize int
	// Markers is the pattern of the markers the summary digests (default
	// [MarkerPattern]).
	Markers *regexp.Regexp
	// Counter measures the ground-truth tokens of each input (default
	// SeedCounter(1)).
	Counter Counter
	// KeepText keeps the flattened input of each call in
	// [SummarizerCall.Text] (off by default: inputs can be large).
	KeepText bool
	// FillBudget makes every summary as long as the length the guard asks
	// for, in tokens of Counter, instead of SummarySize bytes: a summarizer
	// that writes what it is asked for, to check that a compaction never
	// makes the request bigger. The length asked is read from the prompt
	// ("under N words", N words taken as N*4/3 tokens), else from the
	// request's MaxOutputTokens (twice the length asked); SummarySize is
	// used when neither is there.
	FillBudget bool
	// OnBlocked, when set, is called by each call that blocks
	// ([FaultSlow], [FaultHang]) once its input is recorded and before it
	// blocks, on the call's goroutine: a test advances its clock there
	// ([FakeClock.Advance]) to make the guard's summary timeout fire while
	// the summarizer is known to be waiting.
	OnBlocked func()
}

// SummarizerCall records one call to a [Summarizer].
type SummarizerCall struct {
	Asked    int      // length asked, in tokens, as FillBudget reads it (0 if not stated)
	Tokens   int      // ground-truth tokens of the input request
	Contents int      // number of contents in the input
	Markers  []string // markers found in the input, in order of first appearance
	Text     string   // flattened input ([FlattenText]), system instruction first; only with KeepText
	Fault    Fault    // the fault injected, if any
	Output   int      // size of the summary returned (0 on failure)
}

// Summarizer is the ADK-free core of a summarizer model: each ADK line's
// SummarizerModel is a model.LLM that hands its requests to a Summarizer. It
// counts and records its calls and answers with a deterministic summary of a
// configured size that starts with a digest of the markers it saw in its
// input ("Markers: MARK-… MARK-…"), newest kept when they do not all fit, so
// tests can check that information flows through summaries. Faults can be
// injected per call. It is safe for concurrent use.
type Summarizer struct {
	cfg SummarizerConfig
	// release is closed by Release: blocked calls, and later ones, go on.
	release     chan struct{}
	releaseOnce sync.Once

	mu sync.Mutex
	// inFlight counts the calls that have not returned; idle is closed,
	// and replaced, whenever a call returns.
	inFlight  int
	idle      chan struct{}
	calls     []SummarizerCall
	faultAt   map[int]Fault
	faultFrom int
	fromFault Fault
}

// NewSummarizer returns a summarizer configured by cfg.
func NewSummarizer(cfg SummarizerConfig) *Summarizer {
	if cfg.Name == "" {
		cfg.Name = "scripted-summarizer"
	}
	if cfg.SummarySize <= 0 {
		cfg.SummarySize = DefaultSummarySize
	}
	if cfg.Markers == nil {
		cfg.Markers = MarkerPattern
	}
	if cfg.Counter == nil {
		cfg.Counter = SeedCounter(1)
	}
	return &Summarizer{cfg: cfg, faultAt: map[int]Fault{}, release: make(chan struct{}), idle: make(chan struct{})}
}

// Release lets every call blocked by [FaultSlow] or [FaultHang], and every
// later one, answer. It may be called more than once.
func (s *Summarizer) Release() {
	s.releaseOnce.Do(func() { close(s.release) })
}

// Wait waits until no call is in progress, e.g. after [Summarizer.Release]
// at a test's end, so that the calls a guard stopped waiting for have
// returned; it returns ctx's error when ctx ends first.
func (s *Summarizer) Wait(ctx context.Context) error {
	for {
		s.mu.Lock()
		n, idle := s.inFlight, s.idle
		s.mu.Unlock()
		if n == 0 {
			return nil
		}
		select {
		case <-idle:
		case <-ctx.Done():
			return fmt.Errorf("%d summarizer call(s) still in progress: %w", n, context.Cause(ctx))
		}
	}
}

// enter counts a call in progress; the function it returns counts it
// returned.
func (s *Summarizer) enter() (leave func()) {
	s.mu.Lock()
	s.inFlight++
	s.mu.Unlock()
	return func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.inFlight--
		close(s.idle)
		s.idle = make(chan struct{})
	}
}

// blocked tells the test that a call is about to block.
func (s *Summarizer) blocked() {
	if s.cfg.OnBlocked != nil {
		s.cfg.OnBlocked()
	}
}

// Name returns the model name.
func (s *Summarizer) Name() string { return s.cfg.Name }

// InjectFault makes call number call (1-based) fail with f.
func (s *Summarizer) InjectFault(call int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultAt[call] = f
}

// InjectFaultFrom makes every call from number call (1-based) on fail with
// f, unless [Summarizer.InjectFault] set a fault for that call.
func (s *Summarizer) InjectFaultFrom(call int, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faultFrom, s.fromFault = call, f
}

// faultFor is the fault call number n (1-based) injects; s.mu is held.
func (s *Summarizer) faultFor(n int) Fault {
	if f, ok := s.faultAt[n]; ok {
		return f
	}
	if s.faultFrom > 0 && n >= s.faultFrom {
		return s.fromFault
	}
	return FaultNone
}

// Calls returns how many times the summarizer was called.
func (s *Summarizer) Calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.calls)
}

// Records returns a copy of the record of every call.
func (s *Summarizer) Records() []SummarizerCall {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.calls)
}

// Summarize records a call whose request is made of contents and config
// and answers with a summary: a content of role model with one text part,
// or with no part for [FaultEmpty]. It returns [ErrSummarizerFault] for
// [FaultError], ctx's error when ctx ends first, and panics for
// [FaultPanic] (the fault exists to test a guard's panic handling).
// [FaultSlow] and [FaultHang] block until [Summarizer.Release] (FaultSlow
// also until ctx ends).
func (s *Summarizer) Summarize(ctx context.Context, contents []*genai.Content, config *genai.GenerateContentConfig) (*genai.Content, error) {
	defer s.enter()()
	// The call is counted before its input is measured, so a caller
	// that stops waiting (a summary timeout) while the input of a large
	// request is still being counted sees it counted at once, not
	// during a later step.
	// Its fault is known from its number alone, so it is recorded then
	// too: a test reading the records while the input is still being
	// measured sees the fault the call will inject.
	s.mu.Lock()
	idx := len(s.calls)
	n := idx + 1
	f := s.faultFor(n)
	s.calls = append(s.calls, SummarizerCall{Fault: f})
	s.mu.Unlock()
	var all []*genai.Content
	if config != nil && config.SystemInstruction != nil {
		all = append(all, config.SystemInstruction)
	}
	all = append(all, contents...)
	text := FlattenText(all)
	rec := SummarizerCall{
		Asked:    askedTokens(contents, config),
		Tokens:   s.cfg.Counter.Count(contents, config),
		Contents: len(all),
		Markers:  uniqueMatches(s.cfg.Markers, text),
	}
	if s.cfg.KeepText {
		rec.Text = text
	}
	rec.Fault = f
	s.mu.Lock()
	s.calls[idx] = rec
	s.mu.Unlock()
	// The summary's prose is drawn from its input, not from the call's
	// number: a background summary that a guard cancels may or may not
	// have reached the summarizer, and the summaries after it must not
	// depend on which.
	seed := proseSeed(text)

	var summary string
	switch f.kind {
	case faultError:
		return nil, ErrSummarizerFault
	case faultPanic:
		panic("contextguardtest: injected summarizer panic")
	case faultEmpty:
		return &genai.Content{Role: genai.RoleModel}, nil
	case faultSlow:
		s.blocked()
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("scripted summarizer: %w", ctx.Err())
		case <-s.release:
		}
		summary = s.answer(rec, seed)
	case faultHang:
		s.blocked()
		<-s.release // the context is deliberately ignored
		summary = s.answer(rec, seed)
	case faultHuge:
		summary = s.summary(rec.Markers, HugeSummarySize, seed)
	default:
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("scripted summarizer: %w", err)
		}
		summary = s.answer(rec, seed)
	}
	s.mu.Lock()
	s.calls[idx].Output = len(summary)
	s.mu.Unlock()
	return &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{{Text: summary}}}, nil
}

// askedWords finds the length a guard's summary prompt asks for.
var askedWords = regexp.MustCompile(`under (\d+) words`)

// askedTokens is the length req asks of its summary, in tokens: the
// prompt's "under N words" (N*4/3 tokens) in the system instruction, or in
// the last content (the instruction a guard appends to the agent's own
// request, its cached form), else half its MaxOutputTokens, else 0.
func askedTokens(contents []*genai.Content, config *genai.GenerateContentConfig) int {
	if config == nil {
		return 0
	}
	prompts := []*genai.Content{config.SystemInstruction}
	if len(contents) > 0 {
		prompts = append(prompts, contents[len(contents)-1])
	}
	for _, p := range prompts {
		if p == nil {
			continue
		}
		if m := askedWords.FindStringSubmatch(FlattenText([]*genai.Content{p})); m != nil {
			if n, err := strconv.Atoi(m[1]); err == nil && n > 0 {
				return n * 4 / 3
			}
		}
	}
	if config.MaxOutputTokens > 0 {
		return int(config.MaxOutputTokens) / 2
	}
	return 0
}

// answer is the summary of a call that succeeds: SummarySize bytes, or with
// FillBudget as many tokens as the call asked for.
func (s *Summarizer) answer(rec SummarizerCall, seed int64) string {
	if !s.cfg.FillBudget || rec.Asked <= 0 {
		return s.summary(rec.Markers, s.cfg.SummarySize, seed)
	}
	return s.summaryOfTokens(rec.Markers, rec.Asked, seed)
}

// fillSteps bounds the size corrections summaryOfTokens makes: the ratio of
// bytes to tokens of the prose varies little, so two corrections land within
// a few tokens.
const fillSteps = 3

// summaryOfTokens builds a summary of about n tokens of the Counter.
func (s *Summarizer) summaryOfTokens(markers []string, n int, seed int64) string {
	count := func(text string) int {
		return CountContents(s.cfg.Counter, []*genai.Content{{Role: genai.RoleModel, Parts: []*genai.Part{{Text: text}}}}) -
			CountContents(s.cfg.Counter, []*genai.Content{{Role: genai.RoleModel, Parts: []*genai.Part{{Text: ""}}}})
	}
	size := n * 4 // prose runs at about 4 bytes a token
	out := s.summary(markers, size, seed)
	for range fillSteps {
		got := count(out)
		if got <= 0 || got == n {
			break
		}
		size = max(size*n/got, 1)
		out = s.summary(markers, size, seed)
	}
	return out
}

// summary builds a summary of size bytes: a header, the markers (newest kept
// when they do not fit), then filler prose drawn from seed.
func (s *Summarizer) summary(markers []string, size int, seed int64) string {
	var b strings.Builder
	b.WriteString("## Current State\nSummary of the conversation so far.\nMarkers:")
	budget := size - b.Len() - 2
	keep := markers
	for total := 0; len(keep) > 0; {
		total = 0
		for _, m := range keep {
			total += len(m) + 1
		}
		if total <= budget {
			break
		}
		keep = keep[1:]
	}
	for _, m := range keep {
		b.WriteByte(' ')
		b.WriteString(m)
	}
	b.WriteString("\n\n")
	if rest := size - b.Len(); rest > 0 {
		b.WriteString(Generate(KindProseEnglish, rest, seed))
	}
	return b.String()
}

// proseSeed is the seed of a summary's filler prose: a hash of the
// summarizer's input.
func proseSeed(input string) int64 {
	h := fnv.New64a()
	h.Write([]byte(input))
	return int64(h.Sum64() >> 1)
}

func uniqueMatches(re *regexp.Regexp, s string) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range re.FindAllString(s, -1) {
		if !seen[m] {
			seen[m] = true
			out = append(out, m)
		}
	}
	return out
}
