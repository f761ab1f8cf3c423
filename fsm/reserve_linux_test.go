package fsm

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

// TestReservationAdvisedHuge checks the huge-page advice of reservations
// (VmFlags in /proc/self/smaps): a table's asks for huge pages ("hg"), and
// taking it over for an array that should not have them turns that off
// ("nh").
func TestReservationAdvisedHuge(t *testing.T) {
	tab, r := reservedTable(1<<16, 64, false)
	if tab == nil || r == nil {
		t.Fatal("reservedTable = nil on Linux")
	}
	defer unmapBytes(r.mem)
	addr := uint64(uintptr(unsafe.Pointer(&r.mem[0])))
	if flags := vmFlags(t, addr); !strings.Contains(flags, " hg ") {
		t.Errorf("table reservation at %#x not advised huge: VmFlags%s", addr, flags)
	}
	r.setHuge(false)
	if flags := vmFlags(t, addr); !strings.Contains(flags, " nh ") || strings.Contains(flags, " hg ") {
		t.Errorf("reservation at %#x still advised huge after setHuge(false): VmFlags%s", addr, flags)
	}
}

// vmFlags returns the VmFlags of the mapping holding addr, space-padded.
func vmFlags(t *testing.T, addr uint64) string {
	t.Helper()
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
			return " " + strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")) + " "
		}
	}
	t.Fatalf("mapping at %#x not found in /proc/self/smaps", addr)
	return ""
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

// TestPooledTableStartsCommitted checks that a table started in a pooled
// reservation finds the first states' info words, accepting flags and rows
// in pages the pool kept committed (mincore), so a new constraint faults
// none of them in before its first mask. Each array's first page is
// written before the release, as a constraint's first states are.
func TestPooledTableStartsCommitted(t *testing.T) {
	const states, k = 200_001, 60 // the default state budget, a typical class count
	tab, r := reservedTable(states, k, false)
	if tab == nil {
		t.Fatal("reservedTable = nil on Linux")
	}
	initRows(tab, k, 0, 64)
	for i := range 64 {
		tab.accept[i] = true
	}
	r.release()
	tab, r2 := reservedTable(states, k, true)
	if tab == nil {
		t.Skip("the pool did not keep the reservation (full from other tests)")
	}
	if r2 != r {
		t.Fatalf("pooled table in another reservation")
	}
	defer unmapBytes(r.mem)
	page := os.Getpagesize()
	base := uintptr(unsafe.Pointer(&r.mem[0]))
	for _, a := range []struct {
		name string
		p    unsafe.Pointer
	}{{"info", unsafe.Pointer(&tab.info[0])}, {"accept", unsafe.Pointer(&tab.accept[0])}, {"trans", unsafe.Pointer(&tab.trans[0])}} {
		off := int(uintptr(a.p)-base) &^ (page - 1)
		if got := residentBytes(r.mem[off : off+page]); got != page {
			t.Errorf("%s of the first state at offset %d: page not committed in the pooled reservation", a.name, off)
		}
	}
}
