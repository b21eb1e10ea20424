// parse_quant_config. See quant_config.h.
#include "engine/model/quant_config.h"

#include "engine/model/config_fields.h"

namespace di::engine {

Result<QuantConfig> parse_quant_config(const nlohmann::json& j) {
  QuantConfig q;
  if (const nlohmann::json* qc = config_find(j, "quantization_config")) {
    if (!qc->is_object()) return config_field_error("quantization_config", "an object", qc);
    DI_ASSIGN_OR_RETURN(std::string method, config_string(*qc, "quant_method", ""));
    if (method != "fp8")
      return Status::unsupported("config.json: quantization_config.quant_method: '" + method +
                                 "' is not supported (fp8)");
    q.fp8 = true;
    DI_ASSIGN_OR_RETURN(std::string fmt, config_string(*qc, "fmt", "e4m3"));
    if (fmt != "e4m3")
      return Status::unsupported("config.json: quantization_config.fmt: '" + fmt + "' is not supported (e4m3)");
    DI_ASSIGN_OR_RETURN(q.scale_fmt, config_string(*qc, "scale_fmt", ""));
    if (!q.scale_fmt.empty() && q.scale_fmt != "ue8m0")
      return Status::unsupported("config.json: quantization_config.scale_fmt: '" + q.scale_fmt +
                                 "' is not supported (ue8m0, or absent for fp32 scales)");
    if (const nlohmann::json* bs = config_find(*qc, "weight_block_size")) {
      if (!bs->is_array() || bs->size() != 2 || !(*bs)[0].is_number_integer() || !(*bs)[1].is_number_integer() ||
          (*bs)[0].get<int64_t>() < 1 || (*bs)[1].get<int64_t>() < 1)
        return config_field_error("quantization_config.weight_block_size", "two positive integers", bs);
      q.block_out = static_cast<int32_t>((*bs)[0].get<int64_t>());
      q.block_in = static_cast<int32_t>((*bs)[1].get<int64_t>());
    }
  }
  DI_ASSIGN_OR_RETURN(q.expert_dtype, config_string(j, "expert_dtype", ""));
  if (!q.expert_dtype.empty() && q.expert_dtype != "fp4" && q.expert_dtype != "fp8")
    return Status::unsupported("config.json: expert_dtype: '" + q.expert_dtype + "' is not supported (fp4 or fp8)");
  return q;
}

}  // namespace di::engine
