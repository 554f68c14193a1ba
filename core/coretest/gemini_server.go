package coretest

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"sync"

	"google.golang.org/genai"
)

// The Gemini API on a local server: tests run ADK's Gemini model (and so
// its wire format: the request genai's client builds, the answer it
// parses, streamed or not) against it, with no key and no network.

// geminiPath is the REST path genai's client calls for the Gemini API:
// POST /v1beta/models/{model}:generateContent, and
// POST /v1beta/models/{model}:streamGenerateContent?alt=sse to stream.
var geminiPath = regexp.MustCompile(`^/v1beta/models/([^/:]+):(generateContent|streamGenerateContent)$`)

// GeminiCall is one request a GeminiServer received.
type GeminiCall struct {
	Path, Model string
	Stream      bool
	// Body is the request's JSON as received; Contents, SystemInstruction
	// and Tools are decoded from it.
	Body              string
	Contents          []*genai.Content
	SystemInstruction *genai.Content
	Tools             []*genai.Tool
	// Tokens is GeminiServer.Count of the request, answered as
	// usageMetadata.promptTokenCount.
	Tokens int
	// Chunks is how many server-sent events a streamed answer took.
	Chunks int
}

// GeminiServer speaks the Gemini REST API as an http.Handler, for an
// httptest.Server whose URL a test gives genai's client
// (ClientConfig.HTTPOptions.BaseURL, or GOOGLE_GEMINI_BASE_URL). A request
// over Window is rejected with the Gemini API's overflow error; any other
// is answered with Reply's content and a usage of Count's tokens (the
// reply's own tokens are [TextTokens] of its text), whole or,
// when streamed, in pieces with the usage on the last one. It is safe for
// concurrent use.
type GeminiServer struct {
	// APIKey is the key a request must carry in x-goog-api-key.
	APIKey string
	// Window, when > 0, is the most tokens (Count) a request may hold.
	Window int
	// Count is the ground truth of a request; nil counts nothing.
	Count func(call *GeminiCall) int
	// Reply answers a request; its error is answered as a 400.
	Reply func(call *GeminiCall) (*genai.Content, error)

	mu    sync.Mutex
	calls []GeminiCall
}

// Calls returns the requests received so far, in order.
func (f *GeminiServer) Calls() []GeminiCall {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]GeminiCall(nil), f.calls...)
}

// geminiError writes the Gemini API's error body with status.
func geminiError(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"code": status, "message": message, "status": code}})
}

// ServeHTTP answers one generateContent or streamGenerateContent request.
func (f *GeminiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := geminiPath.FindStringSubmatch(r.URL.Path)
	if r.Method != http.MethodPost || m == nil {
		geminiError(w, http.StatusNotFound, "NOT_FOUND", fmt.Sprintf("no route %s %s", r.Method, r.URL.Path))
		return
	}
	call := GeminiCall{Path: r.URL.Path, Model: m[1], Stream: m[2] == "streamGenerateContent"}
	if call.Stream && r.URL.Query().Get("alt") != "sse" {
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "streaming needs alt=sse")
		return
	}
	if r.Header.Get("x-goog-api-key") != f.APIKey {
		geminiError(w, http.StatusUnauthorized, "UNAUTHENTICATED", "API key not valid")
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
		return
	}
	var req struct {
		Contents          []*genai.Content `json:"contents"`
		SystemInstruction *genai.Content   `json:"systemInstruction"`
		Tools             []*genai.Tool    `json:"tools"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", err.Error())
		return
	}
	call.Body, call.Contents, call.SystemInstruction, call.Tools = string(body), req.Contents, req.SystemInstruction, req.Tools
	if f.Count != nil {
		call.Tokens = f.Count(&call)
	}
	if f.Window > 0 && call.Tokens > f.Window {
		f.record(call)
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT",
			fmt.Sprintf("The input token count (%d) exceeds the maximum number of tokens allowed (%d).", call.Tokens, f.Window))
		return
	}
	var reply *genai.Content
	if f.Reply != nil {
		reply, err = f.Reply(&call)
	}
	if err != nil || reply == nil {
		f.record(call)
		geminiError(w, http.StatusBadRequest, "INVALID_ARGUMENT", fmt.Sprintf("no reply: %v", err))
		return
	}
	out := TextTokens(FlattenText([]*genai.Content{reply}))
	usage := map[string]any{"promptTokenCount": call.Tokens, "candidatesTokenCount": out, "totalTokenCount": call.Tokens + out}
	if !call.Stream {
		f.record(call)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{
			"candidates":    []any{map[string]any{"content": reply, "finishReason": "STOP", "index": 0}},
			"usageMetadata": usage,
			"modelVersion":  call.Model,
		})
		return
	}
	parts := streamPieces(reply)
	call.Chunks = len(parts)
	f.record(call)
	w.Header().Set("Content-Type", "text/event-stream")
	for i, p := range parts {
		cand := map[string]any{"content": &genai.Content{Role: genai.RoleModel, Parts: []*genai.Part{p}}, "index": 0}
		chunk := map[string]any{"candidates": []any{cand}, "modelVersion": call.Model}
		if i == len(parts)-1 {
			cand["finishReason"] = "STOP"
			chunk["usageMetadata"] = usage
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\r\n\r\n", b)
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
	}
}

// streamPiecesPerText is how many pieces a streamed text is sent in.
const streamPiecesPerText = 3

// streamPieces splits reply's parts as a stream sends them: a text in
// pieces of whole words, any other part whole.
func streamPieces(reply *genai.Content) []*genai.Part {
	var parts []*genai.Part
	for _, p := range reply.Parts {
		if p == nil {
			continue
		}
		if p.Text == "" {
			parts = append(parts, p)
			continue
		}
		words := strings.SplitAfter(p.Text, " ")
		step := max(1, (len(words)+streamPiecesPerText-1)/streamPiecesPerText)
		for i := 0; i < len(words); i += step {
			parts = append(parts, &genai.Part{Text: strings.Join(words[i:min(i+step, len(words))], "")})
		}
	}
	return parts
}

func (f *GeminiServer) record(c GeminiCall) {
	f.mu.Lock()
	f.calls = append(f.calls, c)
	f.mu.Unlock()
}
