package contextguard

import "errors"

// errSlidingWindowNotYet is returned by the sliding-window strategy until it
// is implemented; the guard then compacts with the threshold strategy.
var errSlidingWindowNotYet = errors.New("contextguard: the sliding-window strategy is not implemented yet; using the threshold strategy")
