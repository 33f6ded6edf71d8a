package tests

import (
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

// readTree returns the files under dir keyed by slash-separated relative path.
func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		out[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	require.NoError(t, err)
	return out
}

// TestComponentDocsAreCurrent regenerates the component reference pages
// into a temporary directory and fails when the committed docs/components
// differ, so a spec change cannot land without its docs.
func TestComponentDocsAreCurrent(t *testing.T) {
	tmp := t.TempDir()
	out, err := run(t, "docs", "--out", tmp)
	require.NoError(t, err, out)

	fresh := readTree(t, tmp)
	committed := readTree(t, "../docs/components")
	require.Contains(t, fresh, "README.md")
	for _, plugin := range ourPlugins(t) {
		found := false
		for p := range fresh {
			if filepath.Base(p) == plugin+".md" {
				found = true
			}
		}
		require.True(t, found, "no page generated for plugin %q", plugin)
	}

	var stale []string
	for p, want := range fresh {
		if committed[p] != want {
			stale = append(stale, p)
		}
	}
	for p := range committed {
		if _, ok := fresh[p]; !ok {
			stale = append(stale, p)
		}
	}
	sort.Strings(stale)
	require.Empty(t, stale, "docs/components is stale in these files: run `make docs` (connect-solace docs --out docs/components) and commit the result")

	// --check agrees with the comparison above.
	out, err = run(t, "docs", "--out", "../docs/components", "--check")
	require.NoError(t, err, out)
}

func TestDocsCheckFailsOnStaleDocs(t *testing.T) {
	tmp := t.TempDir()
	out, err := run(t, "docs", "--out", tmp)
	require.NoError(t, err, out)
	require.NoError(t, os.WriteFile(filepath.Join(tmp, "README.md"), []byte("hand edited\n"), 0o644))
	out, err = run(t, "docs", "--out", tmp, "--check")
	require.Error(t, err)
	require.Contains(t, out, "README.md")
	require.Contains(t, out, "make docs")
}

// k8sObject is the part of a Kubernetes manifest the deployment test reads.
type k8sObject struct {
	Kind     string                `yaml:"kind"`
	Metadata struct{ Name string } `yaml:"metadata"`
	Data     map[string]string     `yaml:"data"`
	Spec     struct {
		Template struct {
			Spec struct {
				Containers []struct {
					Args  []string `yaml:"args"`
					Ports []struct {
						Name          string `yaml:"name"`
						ContainerPort int    `yaml:"containerPort"`
					} `yaml:"ports"`
					Env []struct {
						Name      string `yaml:"name"`
						Value     string `yaml:"value"`
						ValueFrom *struct {
							SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
						} `yaml:"valueFrom"`
					} `yaml:"env"`
					LivenessProbe *struct {
						HTTPGet struct{ Path, Port string } `yaml:"httpGet"`
					} `yaml:"livenessProbe"`
					ReadinessProbe *struct {
						HTTPGet struct{ Path, Port string } `yaml:"httpGet"`
					} `yaml:"readinessProbe"`
				} `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

// TestDeployManifests checks the Kubernetes manifests against the binary:
// the probes hit Benthos's /ping and /ready on the configured HTTP port, the
// password comes from a Secret, and the ConfigMap's config lints.
func TestDeployManifests(t *testing.T) {
	files, err := filepath.Glob("../deploy/k8s/*.yaml")
	require.NoError(t, err)
	objs := map[string]k8sObject{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		require.NoError(t, err)
		var o k8sObject
		require.NoError(t, yaml.Unmarshal(raw, &o), f)
		objs[o.Kind] = o
	}
	for _, kind := range []string{"ConfigMap", "Deployment", "Service", "Secret", "Kustomization"} {
		require.Contains(t, objs, kind)
	}

	conf := objs["ConfigMap"].Data["config.yaml"]
	require.Contains(t, conf, "address: 0.0.0.0:4195")
	require.Contains(t, conf, "password: ${SOLACE_PASSWORD}")

	containers := objs["Deployment"].Spec.Template.Spec.Containers
	require.Len(t, containers, 1)
	c := containers[0]
	require.Equal(t, "/ping", c.LivenessProbe.HTTPGet.Path)
	require.Equal(t, "/ready", c.ReadinessProbe.HTTPGet.Path)
	require.Equal(t, "http", c.ReadinessProbe.HTTPGet.Port)
	require.Len(t, c.Ports, 1)
	require.Equal(t, 4195, c.Ports[0].ContainerPort)
	fromSecret := map[string]bool{}
	for _, e := range c.Env {
		require.NotContains(t, strings.ToLower(e.Name+e.Value), "hunter", "no literal credentials")
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			fromSecret[e.Name] = true
		}
	}
	require.True(t, fromSecret["SOLACE_PASSWORD"], "SOLACE_PASSWORD must come from a Secret")
	require.Equal(t, "/etc/connect-solace/config.yaml", c.Args[len(c.Args)-1])

	if ok, _ := filepath.Glob("../input/solace.go"); len(ok) == 0 {
		return // the solace input has not landed: the config cannot lint yet
	}
	confPath := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(confPath, []byte(conf), 0o600))
	cmd := exec.CommandContext(t.Context(), binPath(t), "lint", confPath)
	cmd.Env = append(cmd.Environ(), "SOLACE_PASSWORD=x")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "the ConfigMap's config.yaml does not lint:\n%s", out)
}
