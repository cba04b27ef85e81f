// Temporary: replaced by the generated op registration.
#include "subgraph/ir/op_schema.h"
namespace subgraph { void registerBuiltinOps(OpRegistry&) {} }
