package plugintest_test

import "log/slog"

const (
	// testApp and testUser name the app and the user of every run.
	testApp  = "app"
	testUser = "user"
)

// quiet discards the guard's logs.
var quiet = slog.New(slog.DiscardHandler)
