package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/codemojex/codemojex/internal/valkeyserver"
)

// langBench is the go test command of the handlers' cost of the players'
// languages (internal/app BenchmarkHandlerLanguages), run in the main
// module like the intake's.
var langBench = []string{"test", "-run", "^$", "-bench", "^BenchmarkHandlerLanguages$", "-benchtime", "1x", "-count", "1", "-timeout", "30m", "./internal/app/"}

// guessRounds is how many times each variant of BenchmarkGuessTexts runs
// (benchLanguages: its median is the figure).
const guessRounds = 5

// guessTexts is the go test command of one variant of internal/gameui's
// BenchmarkGuessTexts (game, catalog_en, catalog_ru, catalog_fa): the CPU of
// the texts a typed guess renders.
func guessTexts(variant string) []string {
	return []string{"test", "-run", "^$", "-bench", "^BenchmarkGuessTexts$/^" + variant + "$", "-benchtime", "20000x", "-count", "1", "./internal/gameui/"}
}

// goBench runs go with args in the main module and returns the metrics of
// benchmark name (parseBenchOutput) and its log lines.
func goBench(ctx context.Context, cfg config, name string, args []string) (map[string]float64, []string, error) {
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = cfg.repo
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, nil, fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return parseBenchOutput(out, name)
}

// benchLanguages measures what the players' languages cost the handlers:
// BenchmarkHandlerLanguages (the real bot's handler process, English
// players against Russian and Persian ones with stored choices) and the
// catalog's own cost per typed guess against package game's English
// (BenchmarkGuessTexts), and adds their rows.
func benchLanguages(ctx context.Context, cfg config, _ *valkeyserver.Server, t *table) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Minute)
	defer cancel()
	// Five rounds, the variants in turn within each (a busy host's load
	// falls on all of them alike), each variant's median.
	runs := map[string][]float64{}
	variants := []string{"game", "catalog_en", "catalog_ru", "catalog_fa"}
	for range guessRounds {
		for _, v := range variants {
			m, _, err := goBench(ctx, cfg, "BenchmarkGuessTexts/"+v, guessTexts(v))
			if err != nil {
				return err
			}
			runs[v] = append(runs[v], m["ns/op"])
		}
	}
	ns := map[string]float64{}
	for v, r := range runs {
		slices.Sort(r)
		ns[v] = r[len(r)/2]
	}
	m, logs, err := goBench(ctx, cfg, "BenchmarkHandlerLanguages", langBench)
	if err != nil {
		return err
	}
	cfg.log.Info("languages", "metrics", m, "guess_ns", ns)
	for _, u := range []string{"lang_updates", "lang_pairs", "lang_en_go_us/update", "lang_loc_go_us/update", "lang_go_ratio",
		"lang_en_valkey_us/update", "lang_loc_valkey_us/update", "lang_valkey_ratio"} {
		if _, ok := m[u]; !ok {
			return fmt.Errorf("BenchmarkHandlerLanguages reported no %q metric (it reported %v)", u, m)
		}
	}
	languageRows(t, m, ns)
	if len(logs) > 0 {
		t.note("BenchmarkHandlerLanguages' log of this run:\n\n```\n" + strings.Join(logs, "\n") + "\n```")
	}
	return nil
}

// languageRows adds the languages section's rows from
// BenchmarkHandlerLanguages' metrics m and BenchmarkGuessTexts' ns/op by
// variant.
func languageRows(t *table, m map[string]float64, ns map[string]float64) {
	ups := commas(int(m["lang_updates"]))
	t.add(fmt.Sprintf("handler CPU per update (the real bot, `BOT_ROLE=handler`, /proc), %s updates of private games (`/play`, three guesses, `/top`): players in Russian and Persian by turns, half with a stored `/language` choice, vs the same from English players (the issue's goal: within 5%%, the pairs' median <= 1.05×)", ups),
		fmt.Sprintf("%.1f µs", m["lang_loc_go_us/update"]), fmt.Sprintf("%.1f µs", m["lang_en_go_us/update"]),
		fmt.Sprintf("%.3f× (median of %d pairs; of the medians %s): goal %s", m["lang_go_ratio"], int(m["lang_pairs"]),
			ratio(m["lang_loc_go_us/update"], m["lang_en_go_us/update"]), verdict(m["lang_go_ratio"] <= 1.05)))
	t.add("the same, Valkey CPU per update (INFO cpu; the language_codes recorded for broadcasts ride in the update's pipeline)",
		fmt.Sprintf("%.1f µs", m["lang_loc_valkey_us/update"]), fmt.Sprintf("%.1f µs", m["lang_en_valkey_us/update"]),
		fmt.Sprintf("%.3f× (median of %d pairs)", m["lang_valkey_ratio"], int(m["lang_pairs"])))
	en := m["lang_en_go_us/update"] * 1000 // ns
	share := func(v string) string {
		return fmt.Sprintf("%+.1f µs a guess: %.1f%% of an English update's handler CPU", (ns[v]-ns["game"])/1000, (ns[v]-ns["game"])/en*100)
	}
	t.add("the catalog's own CPU per typed guess (its answer and the board re-rendered: `BenchmarkGuessTexts`), English / Russian / Persian, vs package game's English texts without a catalog (the bot before localization)",
		fmt.Sprintf("%.1f / %.1f / %.1f µs", ns["catalog_en"]/1000, ns["catalog_ru"]/1000, ns["catalog_fa"]/1000), fmt.Sprintf("%.1f µs", ns["game"]/1000),
		fmt.Sprintf("Persian %s (English %s; medians of %d rounds)", share("catalog_fa"), share("catalog_en"), guessRounds))
}
