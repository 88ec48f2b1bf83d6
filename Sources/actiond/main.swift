import ActiondCore
import ActiondLinux

print("actiond \(ActiondVersion.string)")
