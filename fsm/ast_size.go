package fsm

// Size returns the number of distinct nodes of the AST under n, n
// included: the size of the DAG, each shared node counted once (a tree
// count could be exponential in it). It is what an explanation of a
// constraint reports as its regex AST size; nil has size 0. The walk keeps
// its own stack, so a deep AST cannot exhaust the goroutine's.
func (n *Node) Size() int {
	if n == nil {
		return 0
	}
	seen := map[*Node]bool{n: true}
	stack := []*Node{n}
	for len(stack) > 0 {
		x := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		for _, s := range x.Subs {
			if s != nil && !seen[s] {
				seen[s] = true
				stack = append(stack, s)
			}
		}
	}
	return len(seen)
}
