// Package natstest runs nats-server in process for tests and load runs: a
// single JetStream server or a cluster over loopback. It is its own package
// so that importing adapters/natsjs does not compile a NATS server.
package natstest

import (
	"fmt"
	"net"
	"path/filepath"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// StartServer runs an in-process nats-server with JetStream on a random
// loopback port, storing in dir. Nothing to install: the server is a Go
// dependency. The caller shuts it down.
func StartServer(dir string) (*server.Server, error) { return StartServerOn(dir, -1) }

// StartServerOn is StartServer on a given loopback port (-1: any), e.g. to
// restart a server where its clients will reconnect.
func StartServerOn(dir string, port int) (*server.Server, error) {
	ns, err := server.NewServer(&server.Options{
		ServerName: "tailproof-embedded", Host: "127.0.0.1", Port: port,
		JetStream: true, StoreDir: dir, NoLog: true, NoSigs: true,
	})
	if err != nil {
		return nil, fmt.Errorf("natstest: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return nil, fmt.Errorf("natstest: embedded server not ready")
	}
	return ns, nil
}

// StartCluster runs n in-process servers clustered over loopback routes,
// JetStream on, each storing under dir/<name>. It returns once every server
// accepts connections; JetStream's meta leader may still be electing (see
// WaitJetStream).
func StartCluster(dir string, n int) ([]*server.Server, error) {
	ports := make([]int, n)
	for i := range ports {
		p, err := freePort()
		if err != nil {
			return nil, err
		}
		ports[i] = p
	}
	var routes string
	for i, p := range ports {
		if i > 0 {
			routes += ","
		}
		routes += fmt.Sprintf("nats-route://127.0.0.1:%d", p)
	}
	var out []*server.Server
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		ns, err := server.NewServer(&server.Options{
			ServerName: name, Host: "127.0.0.1", Port: -1,
			JetStream: true, StoreDir: filepath.Join(dir, name), NoLog: true, NoSigs: true,
			Cluster: server.ClusterOpts{Name: "tailproof", Host: "127.0.0.1", Port: ports[i]},
			Routes:  server.RoutesFromStr(routes),
		})
		if err != nil {
			for _, s := range out {
				s.Shutdown()
			}
			return nil, fmt.Errorf("natstest: %w", err)
		}
		go ns.Start()
		out = append(out, ns)
	}
	for _, ns := range out {
		if !ns.ReadyForConnections(20 * time.Second) {
			for _, s := range out {
				s.Shutdown()
			}
			return nil, fmt.Errorf("natstest: cluster server %s not ready", ns.Name())
		}
	}
	return out, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("natstest: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
