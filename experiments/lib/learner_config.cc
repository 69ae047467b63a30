#include "experiments/lib/learner_config.h"

#include <cmath>
#include <string>

#include "datasets/util/errors.h"

namespace placerl {

void FillDefaultPolicyConfig(config::PolicyConfig* p) {
  const encoders::PolicyOptions o;
  p->set_embedding_dim(o.embedding_dim);
  p->set_gcn_layers(o.gcn_layers);
  p->set_hidden_dim(o.hidden_dim);
  p->set_action_hidden_dim(o.action_hidden_dim);
  p->set_lstm_encoder(encoders::LstmEncoderName(o.lstm_encoder));
  p->set_lstm_attention(o.lstm_attention);
  p->set_logit_tanh_constant(o.logit_tanh_constant);
  p->set_logit_temperature(o.logit_temperature);
}

void FillDefaultAgentConfig(config::AgentConfig* a) {
  const agents::AgentOptions o;
  a->set_algorithm(o.algorithm == agents::Algorithm::kPpo ? "ppo" : "reinforce");
  a->set_learning_rate(o.learning_rate);
  a->set_adam_eps(o.adam_eps);
  a->set_max_grad_norm(o.max_grad_norm);
  a->set_entropy_coef(o.entropy_coef);
  a->set_gamma(o.gamma);
  a->set_clip(o.clip);
  a->set_value_coef(o.value_coef);
  a->set_epochs(o.epochs);
  a->set_minibatch_size(o.minibatch_size);
  a->set_normalize_advantages(o.normalize_advantages);
  a->set_baseline_decay(o.baseline_decay);
  a->set_freeze_encoder(o.freeze_encoder);
}

void CheckPolicyConfig(const config::PolicyConfig& p) {
  if (p.embedding_dim() < 1 || p.embedding_dim() > 1024 || p.gcn_layers() < 0 || p.gcn_layers() > 16 ||
      p.hidden_dim() < 1 || p.hidden_dim() > 4096 || p.action_hidden_dim() < 1 || p.action_hidden_dim() > 4096)
    throw ConfigError("policy sizes out of range (embedding_dim in [1, 1024], hidden_dim and action_hidden_dim in "
                      "[1, 4096], gcn_layers in [0, 16])");
  encoders::LstmEncoder e;
  if (!p.lstm_encoder().empty() && !encoders::ParseLstmEncoder(p.lstm_encoder(), &e))
    throw ConfigError("policy.lstm_encoder must be bidirectional, unidirectional or none (got '" + p.lstm_encoder() + "')");
  if (!std::isfinite(p.logit_tanh_constant()) || p.logit_tanh_constant() < 0 || p.logit_tanh_constant() > 1e6)
    throw ConfigError("policy.logit_tanh_constant must be in [0, 1e6] (0 = no tanh)");
  if (!std::isfinite(p.logit_temperature()) || p.logit_temperature() <= 0 || p.logit_temperature() > 1e6)
    throw ConfigError("policy.logit_temperature must be in (0, 1e6]");
}

void CheckAgentConfig(const config::AgentConfig& a) {
  if (a.algorithm() != "ppo" && a.algorithm() != "reinforce")
    throw ConfigError("agent.algorithm must be ppo or reinforce (got '" + a.algorithm() + "')");
  auto positive = [](double v, const char* n) {
    if (!std::isfinite(v) || v <= 0) throw ConfigError(std::string("agent.") + n + " must be > 0");
  };
  auto nonneg = [](double v, const char* n) {
    if (!std::isfinite(v) || v < 0) throw ConfigError(std::string("agent.") + n + " must be >= 0");
  };
  if (!(a.learning_rate() > 0 && a.learning_rate() < 1)) throw ConfigError("agent.learning_rate must be in (0, 1)");
  positive(a.adam_eps(), "adam_eps");
  positive(a.max_grad_norm(), "max_grad_norm");
  positive(a.clip(), "clip");
  nonneg(a.entropy_coef(), "entropy_coef");
  nonneg(a.value_coef(), "value_coef");
  nonneg(a.entropy_target(), "entropy_target");
  nonneg(a.entropy_coef_rate(), "entropy_coef_rate");
  if (a.entropy_target() > 0 && !(a.entropy_coef() > 0))
    throw ConfigError("agent.entropy_target needs agent.entropy_coef > 0 (the coefficient it starts from)");
  if (!(a.gamma() >= 0 && a.gamma() <= 1)) throw ConfigError("agent.gamma must be in [0, 1]");
  if (!(a.baseline_decay() >= 0 && a.baseline_decay() < 1)) throw ConfigError("agent.baseline_decay must be in [0, 1)");
  if (a.epochs() < 1 || a.epochs() > 1000) throw ConfigError("agent.epochs must be in [1, 1000]");
  if (a.minibatch_size() < 1 || a.minibatch_size() > 1000000) throw ConfigError("agent.minibatch_size must be in [1, 1e6]");
}

encoders::PolicyOptions PolicyOptionsFrom(const config::PolicyConfig& p) {
  encoders::PolicyOptions o;
  o.embedding_dim = p.embedding_dim();
  o.gcn_layers = p.gcn_layers();
  o.hidden_dim = p.hidden_dim();
  o.action_hidden_dim = p.action_hidden_dim();
  if (!p.lstm_encoder().empty()) encoders::ParseLstmEncoder(p.lstm_encoder(), &o.lstm_encoder);
  o.lstm_attention = p.lstm_attention();
  o.logit_tanh_constant = p.logit_tanh_constant();
  o.logit_temperature = p.logit_temperature() > 0 ? p.logit_temperature() : 1.0;  // unset (0) = 1
  return o;
}

agents::AgentOptions AgentOptionsFrom(const config::AgentConfig& a, uint64_t seed) {
  agents::AgentOptions o;
  o.algorithm = a.algorithm() == "ppo" ? agents::Algorithm::kPpo : agents::Algorithm::kReinforce;
  o.learning_rate = a.learning_rate();
  o.adam_eps = a.adam_eps();
  o.max_grad_norm = a.max_grad_norm();
  o.entropy_coef = a.entropy_coef();
  o.gamma = a.gamma();
  o.clip = a.clip();
  o.value_coef = a.value_coef();
  o.epochs = a.epochs();
  o.minibatch_size = a.minibatch_size();
  o.normalize_advantages = a.normalize_advantages();
  o.baseline_decay = a.baseline_decay();
  o.freeze_encoder = a.freeze_encoder();
  o.entropy_target = a.entropy_target();
  o.entropy_coef_rate = a.entropy_coef_rate() > 0 ? a.entropy_coef_rate() : 1.0;  // unset (0) = 1
  o.seed = seed;
  return o;
}

}  // namespace placerl
