import ActiondCore
import ActiondLinux

print("actionctl \(ActiondVersion.string)")
