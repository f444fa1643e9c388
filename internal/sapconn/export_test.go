package sapconn

import "github.com/sapagent/sapagent/internal/sap"

// What the external tests (which run the tools through saptools) check directly.
var TechnicalMode = technicalMode

func Unconnected(err error) sap.Connector { return unconnected{err} }
