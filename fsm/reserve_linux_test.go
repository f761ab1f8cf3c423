package fsm

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestReservationAdvisedHuge checks that a fresh reservation's mapping
// carries the huge-page advice (VmFlags "hg" in /proc/self/smaps).
func TestReservationAdvisedHuge(t *testing.T) {
	r := reserveBytes(8 << 20)
	if r == nil {
		t.Fatal("reserveBytes(8 MiB) = nil on Linux")
	}
	defer unmapBytes(r.mem)
	addr := uint64(uintptr(unsafe.Pointer(&r.mem[0])))
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no /proc/self/smaps: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	inside := false
	for sc.Scan() {
		line := sc.Text()
		if lo, hi, ok := vmaRange(line); ok {
			inside = lo <= addr && addr < hi
			continue
		}
		if inside && strings.HasPrefix(line, "VmFlags:") {
			if !strings.Contains(" "+strings.TrimPrefix(line, "VmFlags:")+" ", " hg ") {
				t.Fatalf("reservation at %#x not advised huge: %s", addr, line)
			}
			return
		}
	}
	t.Fatalf("reservation at %#x not found in /proc/self/smaps", addr)
}

// vmaRange parses the "lo-hi perms ..." header line of an smaps entry.
func vmaRange(line string) (lo, hi uint64, ok bool) {
	field, _, _ := strings.Cut(line, " ")
	a, b, found := strings.Cut(field, "-")
	if !found {
		return 0, 0, false
	}
	lo, err1 := strconv.ParseUint(a, 16, 64)
	hi, err2 := strconv.ParseUint(b, 16, 64)
	return lo, hi, err1 == nil && err2 == nil
}
