package gemini

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"sort"
	"strings"

	"google.golang.org/genai"
)

// The Live endpoint's RPC, by kind of credential: an API key calls
// BidiGenerateContent, an ephemeral token ("auth_tokens/…", v1alpha only)
// BidiGenerateContentConstrained.
const (
	methodKey   = "BidiGenerateContent"
	methodToken = "BidiGenerateContentConstrained"
	tokenPrefix = "auth_tokens/"
)

// liveEndpoint returns the URL the client dials for the Gemini Developer
// API at base (its scheme made wss unless it is ws or wss, its path kept,
// its query and userinfo dropped) and version, and the handshake's
// headers: header's, with the credential set last (x-goog-api-key for an
// API key, "Authorization: Token …" for an ephemeral token). This is what
// the genai SDK's Live.Connect dials (TestEquivalentSetup compares them).
func liveEndpoint(base, version, key string, header http.Header) (string, http.Header, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", nil, fmt.Errorf("the base URL: %w", err)
	}
	scheme := u.Scheme
	if scheme != "ws" && scheme != "wss" {
		scheme = "wss"
	}
	h := http.Header{}
	for k, vs := range header {
		for _, v := range vs {
			h.Add(k, v)
		}
	}
	method := methodKey
	if strings.HasPrefix(key, tokenPrefix) {
		if version != "v1alpha" {
			return "", nil, fmt.Errorf("an ephemeral token (%s…) needs APIVersion \"v1alpha\", not %q", tokenPrefix, version)
		}
		h.Set("Authorization", "Token "+key)
		method = methodToken
	} else {
		h.Set("x-goog-api-key", key)
	}
	ep := url.URL{Scheme: scheme, Host: u.Host,
		Path: path.Join(u.Path, "ws/google.ai.generativelanguage."+version+".GenerativeService."+method)}
	return ep.String(), h, nil
}

// modelName returns the model's resource name as the setup message
// carries it: "models/<model>", unless it already names models/ or
// tunedModels/.
func modelName(model string) (string, error) {
	switch {
	case model == "":
		return "", fmt.Errorf("no model")
	case strings.ContainsAny(model, "?&") || strings.Contains(model, ".."):
		return "", fmt.Errorf("model %q: not a model name", model)
	case strings.HasPrefix(model, "models/") || strings.HasPrefix(model, "tunedModels/"):
		return model, nil
	}
	return "models/" + model, nil
}

// Where each member of a LiveConnectConfig (as JSON) goes in the setup
// message of the Gemini Developer API. Members not listed here are
// refused (setupMessage): a setting this client cannot send is an error
// at Connect, never dropped.
var (
	// generationConfigMembers go to setup.generationConfig as they are.
	generationConfigMembers = []string{"responseModalities", "temperature", "topP", "topK", "maxOutputTokens",
		"mediaResolution", "seed", "speechConfig", "thinkingConfig", "enableAffectiveDialog", "translationConfig"}
	// setupMembers go to setup as they are (after the checks of
	// checkMember).
	setupMembers = []string{"systemInstruction", "tools", "sessionResumption", "inputAudioTranscription",
		"outputAudioTranscription", "realtimeInputConfig", "contextWindowCompression", "proactivity",
		"avatarConfig", "safetySettings", "labels"}
)

// setupMessage returns the client's first message, {"setup":{…}}, for
// model and cfg: the model's resource name, the generation settings
// under generationConfig and the session's settings beside it, each as
// genai's types encode it in JSON. A member of cfg this client does not
// send (HTTPOptions, ExplicitVADSignal, a tool or part kind it does not
// know, …) is an error naming it.
func setupMessage(model string, cfg *genai.LiveConnectConfig) ([]byte, error) {
	name, err := modelName(model)
	if err != nil {
		return nil, err
	}
	members := map[string]json.RawMessage{}
	if cfg != nil {
		b, err := json.Marshal(cfg)
		if err != nil {
			return nil, fmt.Errorf("encoding the LiveConnectConfig: %w", err)
		}
		if err := json.Unmarshal(b, &members); err != nil {
			return nil, fmt.Errorf("encoding the LiveConnectConfig: %w", err)
		}
	}
	setup := map[string]any{"model": name}
	gen := map[string]json.RawMessage{}
	var unknown []string
	for k, v := range members {
		if bytes.Equal(v, []byte("null")) {
			continue
		}
		switch {
		case contains(generationConfigMembers, k):
			if err := checkMember(k, v); err != nil {
				return nil, err
			}
			gen[k] = v
		case contains(setupMembers, k):
			if err := checkMember(k, v); err != nil {
				return nil, err
			}
			setup[k] = v
		default:
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("LiveConnectConfig member(s) %s: not sent by this adapter's Live client (it refuses what it cannot send, rather than drop it)", strings.Join(unknown, ", "))
	}
	if len(gen) > 0 {
		setup["generationConfig"] = gen
	}
	return json.Marshal(map[string]any{"setup": setup})
}

// contains reports whether list holds s.
func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// The members allowed inside the setup members that the Gemini Developer
// API's setup takes only in part; any other is refused.
var (
	// contentMembers and partMembers: systemInstruction is a Content of
	// text parts.
	contentMembers = []string{"parts", "role"}
	partMembers    = []string{"text", "thought"}
	// toolMembers are the kinds of tool sent as they are.
	toolMembers = []string{"functionDeclarations", "codeExecution", "urlContext", "computerUse", "fileSearch",
		"googleSearchRetrieval", "mcpServers"}
	// sessionResumptionMembers: "transparent" is Vertex AI's only.
	sessionResumptionMembers = []string{"handle"}
	// safetySettingMembers: "method" is Vertex AI's only.
	safetySettingMembers = []string{"category", "threshold"}
	// speechConfigMembers: the Live API speaks with one voice
	// (multiSpeakerVoiceConfig is refused).
	speechConfigMembers = []string{"voiceConfig", "languageCode"}
)

// checkMember returns an error when v, the JSON of config member k, holds
// something this client does not send.
func checkMember(k string, v json.RawMessage) error {
	switch k {
	case "systemInstruction":
		var c map[string]json.RawMessage
		if err := json.Unmarshal(v, &c); err != nil {
			return fmt.Errorf("LiveConnectConfig.systemInstruction: %w", err)
		}
		if err := only("systemInstruction", c, contentMembers); err != nil {
			return err
		}
		var parts []map[string]json.RawMessage
		if p, ok := c["parts"]; ok {
			if err := json.Unmarshal(p, &parts); err != nil {
				return fmt.Errorf("LiveConnectConfig.systemInstruction.parts: %w", err)
			}
		}
		for i, p := range parts {
			if err := only(fmt.Sprintf("systemInstruction.parts[%d]", i), p, partMembers); err != nil {
				return err
			}
		}
	case "tools":
		var tools []map[string]json.RawMessage
		if err := json.Unmarshal(v, &tools); err != nil {
			return fmt.Errorf("LiveConnectConfig.tools: %w", err)
		}
		for i, t := range tools {
			if err := only(fmt.Sprintf("tools[%d]", i), t, toolMembers); err != nil {
				return err
			}
		}
	case "sessionResumption":
		return onlyObject(k, v, sessionResumptionMembers)
	case "speechConfig":
		return onlyObject(k, v, speechConfigMembers)
	case "safetySettings":
		var ss []map[string]json.RawMessage
		if err := json.Unmarshal(v, &ss); err != nil {
			return fmt.Errorf("LiveConnectConfig.safetySettings: %w", err)
		}
		for i, s := range ss {
			if err := only(fmt.Sprintf("safetySettings[%d]", i), s, safetySettingMembers); err != nil {
				return err
			}
		}
	}
	return nil
}

// onlyObject is only for the JSON object v.
func onlyObject(what string, v json.RawMessage, allowed []string) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(v, &m); err != nil {
		return fmt.Errorf("LiveConnectConfig.%s: %w", what, err)
	}
	return only(what, m, allowed)
}

// only returns an error naming the members of m not in allowed.
func only(what string, m map[string]json.RawMessage, allowed []string) error {
	var bad []string
	for k, v := range m {
		if !contains(allowed, k) && !bytes.Equal(v, []byte("null")) {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	return fmt.Errorf("LiveConnectConfig.%s: member(s) %s: not sent by this adapter's Live client (it refuses what it cannot send, rather than drop it)", what, strings.Join(bad, ", "))
}
