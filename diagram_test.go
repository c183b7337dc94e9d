package tailproof

import (
	"os"
	"strings"
	"testing"

	"github.com/tailproof/tailproof/machines/reconcile"
)

// README embeds the reconcile machine's diagram; it must be the table's own.
func TestReadmeEmbedsReconcileDiagram(t *testing.T) {
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```mermaid\n"+reconcile.Table.Mermaid()+"```") {
		t.Fatalf("README's mermaid block differs from reconcile.Table.Mermaid():\n%s", reconcile.Table.Mermaid())
	}
}
