package crawldb_test

import (
	"strings"
	"testing"

	"github.com/trawl/trawl/crawldb"
)

func TestParseStatusNamesAndNumbers(t *testing.T) {
	for in, want := range map[string]crawldb.Status{
		"db_fetched": crawldb.StatusDBFetched, "DB_Gone": crawldb.StatusDBGone, "2": crawldb.StatusDBFetched,
		"0x21": crawldb.StatusFetchSuccess, "33": crawldb.StatusFetchSuccess, "linked": crawldb.StatusLinked,
		"65": crawldb.StatusSignature, "67": crawldb.StatusLinked, " fetch_robots_denied ": crawldb.StatusFetchRobotsDenied,
	} {
		got, err := crawldb.ParseStatus(in)
		if err != nil || got != want {
			t.Errorf("ParseStatus(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "fetched", "0", "9", "256", "-1", "0x99", "db_fetched2"} {
		_, err := crawldb.ParseStatus(bad)
		if err == nil {
			t.Errorf("ParseStatus(%q): no error", bad)
			continue
		}
		for _, w := range []string{"db_unfetched (1)", "fetch_success (33)", "linked (67)"} {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("ParseStatus(%q) error %q does not list %q", bad, err, w)
			}
		}
	}
}

// TestStatusTable checks every status round-trips through its name and
// number, and that the codes are Nutch's.
func TestStatusTable(t *testing.T) {
	nutch := map[string]int{"db_unfetched": 1, "db_fetched": 2, "db_gone": 3, "db_redir_temp": 4, "db_redir_perm": 5,
		"db_notmodified": 6, "db_duplicate": 7, "db_orphan": 8, "fetch_success": 0x21, "fetch_retry": 0x22,
		"fetch_gone": 0x23, "fetch_redir_temp": 0x24, "fetch_redir_perm": 0x25, "fetch_notmodified": 0x26,
		"signature": 0x41, "injected": 0x42, "linked": 0x43, "parse_metadata": 0x44}
	seen := map[string]bool{}
	for _, i := range crawldb.Statuses() {
		if i.Status.String() != i.Name || i.Meaning == "" {
			t.Errorf("%d: String %q, name %q, meaning %q", i.Status, i.Status.String(), i.Name, i.Meaning)
		}
		if n, ok := nutch[i.Name]; ok && int(i.Status) != n {
			t.Errorf("%s is %d, Nutch's is %d", i.Name, i.Status, n)
		}
		seen[i.Name] = true
		help := crawldb.StatusHelp("  ")
		if !strings.Contains(help, i.Name) || !strings.Contains(help, i.Meaning) {
			t.Errorf("StatusHelp lacks %s", i.Name)
		}
	}
	for n := range nutch {
		if !seen[n] {
			t.Errorf("Nutch's status %s is missing", n)
		}
	}
	if s := crawldb.Status(0x99).String(); s != "status_0x99" {
		t.Errorf("unknown status prints %q", s)
	}
}
