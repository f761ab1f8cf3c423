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
