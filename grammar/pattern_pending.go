package grammar

import (
	"errors"

	"conform/fsm"
)

// parsePattern is fsm.ParsePattern once it lands.
func parsePattern(s string) (*fsm.Node, error) {
	return nil, errors.New("pattern support pending (fsm.ParsePattern)")
}

// parseRegex is fsm.Parse once it lands.
func parseRegex(s string) (*fsm.Node, error) {
	return nil, errors.New("regex support pending (fsm.Parse)")
}
